package web

import "workbench/orchestrator"

// NoticeSenders are the channels besides the in-app notifications that
// notices go out by (email when WORKBENCH_SMTP_ADDR is set, the webhook
// when WORKBENCH_NOTIFY_WEBHOOK is): the portal's, and a command line
// command's that tells a user (`workbench user rename`), which reads the
// same environment.
func (c *Config) NoticeSenders() []orchestrator.Sender {
	var senders []orchestrator.Sender
	if c.SMTPAddr != "" {
		senders = append(senders, &orchestrator.SMTPSender{Addr: c.SMTPAddr, From: c.SMTPFrom, Username: c.SMTPUsername, Password: c.SMTPPassword})
	}
	if c.NotifyWebhook != "" {
		senders = append(senders, &orchestrator.WebhookSender{URL: c.NotifyWebhook, Secret: c.NotifyWebhookSecret})
	}
	return senders
}
