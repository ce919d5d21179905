package handlers

import (
	"context"
	"fmt"

	"workbench/models"
	"workbench/templates/i18n"
)

// fieldMessages are the validation messages of the user-side forms (launch,
// tokens, SSH keys) that a form page translates for its reader. The models
// word them once, in English, for the API as well; a page looks the exact
// text up here, and shows any other message as recorded.
var fieldMessages = map[string]string{}

func init() {
	for _, k := range []string{
		i18n.Key("use 1–48 Latin letters (a–z, A–Z), digits, spaces, '.', '_' or '-', starting with a letter or digit"),
		i18n.Key("you already have a workbench with this name"),
		i18n.Key("give the token a name of 1–64 printable characters"),
		i18n.Key("must be in the future"),
		i18n.Key("you already have a token with this name"),
		i18n.Key("this workbench already has a token with this name"),
		i18n.Key("paste a public key, e.g. the contents of ~/.ssh/id_ed25519.pub"),
		i18n.Key("paste exactly one public key line"),
		i18n.Key("this is a private key; paste the .pub file instead, and keep the private key secret"),
		i18n.Key("not an OpenSSH public key (want e.g. \"ssh-ed25519 AAAA… you@host\")"),
		i18n.Key("paste the key alone, without authorized_keys options"),
		i18n.Key("DSA keys are too weak; use ed25519, ECDSA or RSA"),
		i18n.Key("give the key a name of 1–64 characters"),
		i18n.Key("this key is already registered"),
		i18n.Key("another account has already verified this key: make a new key for yourself, and tell an administrator if nobody else should hold its private key"),
		i18n.Key("you already have a key with this name"),
		i18n.Key("must be a whole number of minutes"),
		i18n.Key("choose an enabled flavor with GPUs"),
		i18n.Key("not a time zone: use a name such as Asia/Shanghai or Europe/Berlin"),
	} {
		fieldMessages[k] = k
	}
}

// fieldMessage is a form field's validation message in the reader's
// language when it is one of fieldMessages or a reason the layers below
// worded (i18n.Reason: a flavor too big for this server), else as
// recorded. (A message
// may hold a %: it is printed through %s, never used as a format.)
func fieldMessage(ctx context.Context, msg string) string {
	if k, ok := fieldMessages[msg]; ok {
		return i18n.T(ctx, k)
	}
	return i18n.Reason(ctx, msg)
}

// quotaText is a quota warning or limit (quotaStatusOf, worded once in
// English for /api/v1/me as well) in the page reader's language.
// limitReachedSentence is the banner's sentence for a monthly limit
// reached (quotaStatus.LimitReached): "Your monthly budget is used up: new
// launches are refused …". The refusal's own wording ("quota exceeded: the
// monthly budget is used up") before the banner's colon read "quota
// exceeded: the monthly budget is used up: new launches …", two colons
// and a lower-case start.
func limitReachedSentence(ctx context.Context, msg string) string {
	if msg == models.BudgetUsedUp() {
		return i18n.T(ctx, "Your monthly budget is used up: new launches are refused until next month or until an administrator raises your quota.")
	}
	var n int64
	if _, err := fmt.Sscanf(msg, "quota exceeded: the monthly limit of %d GPU-hours is used up", &n); err == nil {
		return i18n.T(ctx, "Your monthly limit of %d GPU-hours is used up: new launches are refused until next month or until an administrator raises your quota.", n)
	}
	return i18n.T(ctx, "New launches are refused until next month or until an administrator raises your quota: %s.", i18n.ReasonClause(ctx, msg))
}

func quotaText(ctx context.Context, msg string) string {
	switch msg {
	case "You have used 80% or more of your monthly GPU-hours.":
		return i18n.T(ctx, "You have used 80%% or more of your monthly GPU-hours.")
	case "You have spent 80% or more of your monthly budget.":
		return i18n.T(ctx, "You have spent 80%% or more of your monthly budget.")
	case "quota exceeded: the monthly budget is used up":
		return i18n.T(ctx, "quota exceeded: the monthly budget is used up")
	case bookingsTakeTheBudget:
		return i18n.T(ctx, "Your bookings' unused time takes what is left of your monthly budget: only launches on your bookings can start.")
	}
	var n int64
	if _, err := fmt.Sscanf(msg, "quota exceeded: the monthly limit of %d GPU-hours is used up", &n); err == nil {
		return i18n.T(ctx, "quota exceeded: the monthly limit of %d GPU-hours is used up", n)
	}
	return msg
}
