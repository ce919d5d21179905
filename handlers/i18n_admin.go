package handlers

import (
	"context"
	"regexp"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// trc prints key in the language the request chose (see templates/i18n):
// flash messages, page errors and labels the admin, calculator, catalog and
// GPU pages build in Go. JSON API messages stay English.
func trc(c *gin.Context, key string, args ...any) string {
	return i18n.T(c.Request.Context(), key, args...)
}

// trcMsg translates a message that was written elsewhere in English (a
// model's validation message): its catalog text when it has one, else the
// English as it is. A "%" in the message is literal (the catalog key has
// it doubled), so a message carrying a user's input is never read as a
// format.
func trcMsg(c *gin.Context, msg string) string {
	return msgPatternT(c.Request.Context(), msg, adminMessages, adminMessageRes)
}

// adminMessages are the models' validation messages on the admin forms
// that carry figures or names, as catalog keys (%s: the inserted words).
var adminMessages = []string{
	"must be at least %s characters",
	"must be between 0 and %s",
	"must be between 0.0625 (64 MiB) and %s GiB",
	"must be between 0.1 and %s",
	"must be a whole number, not %s",
	"is not a valid image reference: it has a space in it",
	"is not a valid image reference: leave out %s, write registry/name:tag",
	"is not a valid image reference: the digest after @ must be sha256: and 64 hexadecimal digits",
	"is not a valid image reference: the tag after : holds letters, digits, _ . - (at most 128, not starting with . or -)",
	"is not a valid image reference: the name is lowercase only (%s)",
	"is not a valid image reference: write registry/name:tag, e.g. quay.io/jupyter/base-notebook:latest",
	"%s is not a port number; list ports like 6006, 8050",
	"at most %s extra ports",
	"port %s is the workbench's own app (Jupyter): its Open button reaches it",
	"port %s is listed twice",
	"port %s: use ports 1024–65535 (apps run as a non-root user)",
	"no priority class %s",
	"must have a lowercase path (%s)",
	"is not a parameter of this endpoint (it takes: %s)",
	"use YYYY-MM, e.g. %s",
	"cannot be in the past (it is now %s UTC): a rate change never reprices time already used; leave it empty for now",
	"the group has GPU bookings not yet over (%s): cancel them first, or delete the group once they are over",
	"a %s rate is the same for every workbench, whatever its GPUs: leave the GPU model empty",
	"%s is the default class, taken by every launch that names none: make another class the default first",
	"an RSA key of %s bits is too weak: use ed25519, or RSA of at least %s bits",
	// A group ticked on the add-user form, deleted before it was posted.
	"there is no group %s; create it first (groups are not made by adding a user)",
	// The flavor form's checks against this server (checkFlavorFits).
	"%s is not a GPU model of this server, which has no GPUs; make the flavor CPU-only (GPU count 0)",
	"%s is not a GPU model of this server; known models: %s",
	"this server has %s CPU cores; a flavor cannot ask for %s",
	"this server has %s × %s that can be handed out whole (GPUs split into MIG instances cannot); a flavor cannot ask for %s",
}

var adminMessageRes = msgPatterns(adminMessages)

// trcErrs translates every message of a form's errors with trcMsg.
func trcErrs(c *gin.Context, errs templates.FormErrors) templates.FormErrors {
	for k, v := range errs {
		errs[k] = trcMsg(c, v)
	}
	return errs
}

// unitTextT is unitText in lc's language: "1 × MIG 1g.10gb (H100)",
// "1 slice of a shared H100", "2 × NVIDIA H100 80GB HBM3".
func unitTextT(lc context.Context, f models.Flavor) string {
	if f.UnitKind == models.UnitSlice {
		return i18n.T(lc, "1 slice of a shared %s", models.ShortGPUName(f.GPUModel))
	}
	return unitText(f)
}

var (
	mirrorLineRe    = regexp.MustCompile(`^line (\d+): (.*)$`)
	mirrorSubjectRe = regexp.MustCompile(`^(registry|mirror) ("[^"]*") (.*)$`)
	mirrorTwoRe     = regexp.MustCompile(`^(\S+) has two mirrors$`)
)

// mirrorErrorT translates runtime.ParseMirrors' messages ("line 2:
// registry "x" is empty"); one it does not know is shown as it is.
func mirrorErrorT(c *gin.Context, msg string) string {
	m := mirrorLineRe.FindStringSubmatch(msg)
	if m == nil {
		return trcMsg(c, msg)
	}
	line, rest := m[1], m[2]
	if s := mirrorSubjectRe.FindStringSubmatch(rest); s != nil {
		if s[1] == "registry" {
			return trc(c, "line %s: registry %s %s", line, s[2], trcMsg(c, s[3]))
		}
		return trc(c, "line %s: mirror %s %s", line, s[2], trcMsg(c, s[3]))
	}
	if s := mirrorTwoRe.FindStringSubmatch(rest); s != nil {
		return trc(c, "line %s: %s has two mirrors", line, s[1])
	}
	if strings.HasPrefix(rest, "want \"registry = mirror\"") {
		return trc(c, "line %s: want “registry = mirror”, e.g. “docker.io = registry.example.cn”", line)
	}
	return msg
}

// checkMessages are the image test's outcomes as the orchestrator words
// them (stored, and returned by the API in English), as catalog keys whose
// %s stand for the words the orchestrator put in.
var checkMessages = []string{
	"All checks passed: the image starts as %s, Jupyter answers under the base URL with the token, and the home %s is writable.",
	"The test could not run: %s.",
	"the image %s could not be checked: the engine said %s",
	"the start command cannot be split into words: %s",
	"the home path %s is a file in the image, not a directory: pick another home path",
	"the engine could not create a container from the image: %s",
	"the image has no user %s (its run-as user): set Run as user to a numeric uid such as 1000, or to a user in the image's /etc/passwd",
	"the process runs as %s, not as the configured user %s (%s): fix Run as user or the image's entrypoint",
	"the home path %s could not be read: %s",
	"the home path %s is not writable by %s (it is owned by %s with mode %s): make it writable in the image (chmod u+w) or pick another home path",
	"the start command's program %s is not in the image, so Jupyter cannot start: check the start command, or use an image with Jupyter",
	"the start command's program %s cannot be run by user %s: check the start command and Run as user",
	"the container could not start: %s",
	"the container vanished while Jupyter was starting",
	"Jupyter answers under the base URL but refuses the token: the start command must pass {token} to Jupyter (for example --IdentityProvider.token={token})",
	"Jupyter answers at / but not under the base URL %s: the start command must pass {base_url} to Jupyter (for example --ServerApp.base_url={base_url})",
}

var checkMessageRes = msgPatterns(checkMessages)

// msgPatterns turns catalog keys whose %s stand for inserted words into
// patterns that recognise the English sentence and capture those words.
func msgPatterns(keys []string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(keys))
	for i, k := range keys {
		parts := strings.Split(k, "%s")
		for j := range parts {
			parts[j] = regexp.QuoteMeta(parts[j])
		}
		out[i] = regexp.MustCompile(`^(?s)` + strings.Join(parts, `(.*?)`) + `$`)
	}
	return out
}

// msgPatternT translates msg when one of keys (with patterns res) words
// it: the sentence in lc's language, the captured words as they were;
// else the catalog text of msg itself, else msg.
func msgPatternT(lc context.Context, msg string, keys []string, res []*regexp.Regexp) string {
	for i, re := range res {
		if m := re.FindStringSubmatch(msg); m != nil {
			args := make([]any, len(m)-1)
			for j, s := range m[1:] {
				args[j] = s
			}
			return i18n.T(lc, keys[i], args...)
		}
	}
	return trMsg(lc, msg)
}

// checkMessageT words an image test's outcome in the request's language:
// the sentence is translated, the names and engine messages in it are not.
func checkMessageT(c *gin.Context, msg string) string {
	return msgPatternT(c.Request.Context(), msg, checkMessages, checkMessageRes)
}

// fieldErrorsT is every field error in err (models.FieldErrors) as a
// form's errors, in the reader's language: a form shows all that is wrong
// with it at once.
func fieldErrorsT(c *gin.Context, err error) templates.FormErrors {
	return trcErrs(c, fieldErrors(err))
}

// fieldErrors is fieldErrorsT as the models word them (for a form that
// translates its errors as it renders).
func fieldErrors(err error) templates.FormErrors {
	out := templates.FormErrors{}
	for _, ve := range models.FieldErrors(err) {
		if _, dup := out[ve.Field]; !dup {
			out[ve.Field] = ve.Message
		}
	}
	return out
}
