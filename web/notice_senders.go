package web

import (
	"context"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// NoticeSenders are the channels besides the in-app notifications that
// notices go out by (email when WORKBENCH_SMTP_ADDR is set, the webhook
// when WORKBENCH_NOTIFY_WEBHOOK is): the portal's, and a command line
// command's that tells a user (`workbench user rename`), which reads the
// same environment. An email is worded for its reader (wordNotice); the
// webhook is the operator's integration and sends the notice as stored,
// English with times in UTC.
func (c *Config) NoticeSenders() []orchestrator.Sender {
	var senders []orchestrator.Sender
	if c.SMTPAddr != "" {
		senders = append(senders, &orchestrator.SMTPSender{Addr: c.SMTPAddr, From: c.SMTPFrom, Username: c.SMTPUsername, Password: c.SMTPPassword,
			Word: wordNotice})
	}
	if c.NotifyWebhook != "" {
		senders = append(senders, &orchestrator.WebhookSender{URL: c.NotifyWebhook, Secret: c.NotifyWebhookSecret})
	}
	return senders
}

// wordNotice words a notice's subject or message as the notifications page
// words it for the same user (templates.NoticeText): in their saved
// language and with each time in their zone beside UTC. There is no
// request at send time, so no Accept-Language or cookie: a user who never
// chose a language reads the portal's default, English (i18n.Negotiate).
func wordNotice(ctx context.Context, n orchestrator.Notice, text string) string {
	ctx = i18n.WithLocale(ctx, i18n.Negotiate(n.Locale, ""))
	if n.TimeZone != "" {
		// Saved after ParseTimeZone; a zone the binary no longer knows
		// reads UTC only, as on the pages.
		if _, loc, err := models.ParseTimeZone(n.TimeZone); err == nil {
			ctx = templates.WithTimeZone(ctx, loc)
		}
	}
	return templates.NoticeText(ctx, text)
}
