package web_test

import (
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"workbench/web"
)

// secretSettings are read from the environment only (no flag shows them in
// `ps`), so no flag's usage names them.
var secretSettings = []string{
	"WORKBENCH_ADMIN_PASSWORD", "WORKBENCH_OIDC_CLIENT_SECRET", "WORKBENCH_SMTP_PASSWORD",
	"WORKBENCH_NOTIFY_WEBHOOK_SECRET", "WORKBENCH_METRICS_TOKEN",
}

// kubeOnlySettings choose and configure the Kubernetes runtime, which a
// compose install (the Docker engine's socket) does not use.
var kubeOnlySettings = []string{
	"WORKBENCH_RUNTIME", "WORKBENCH_KUBECONFIG", "WORKBENCH_K8S_NAMESPACE",
	"WORKBENCH_K8S_NODE_SELECTOR", "WORKBENCH_K8S_STORAGE_CLASS",
}

// TestComposePassesEverySetting: a setting put in `.env` beside
// docker-compose.yml reaches the portal. The compose file lists the
// container's environment, so a setting it leaves out (WORKBENCH_SSH_ADDR,
// the single sign-on ones did) silently does nothing for a compose install.
func TestComposePassesEverySetting(t *testing.T) {
	raw, err := os.ReadFile("../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Environment map[string]string `json:"environment"`
		} `json:"services"`
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	passed := compose.Services["workbench"].Environment
	if len(passed) == 0 {
		t.Fatal("docker-compose.yml: the workbench service has no environment")
	}

	want := slices.Clone(secretSettings)
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	new(web.Config).BindFlags(fs)
	named := regexp.MustCompile(`WORKBENCH_[A-Z0-9_]+`)
	fs.VisitAll(func(f *flag.Flag) {
		for _, name := range named.FindAllString(f.Usage, -1) {
			if !slices.Contains(kubeOnlySettings, name) && !slices.Contains(want, name) {
				want = append(want, name)
			}
		}
	})
	if len(want) < 40 {
		t.Fatalf("found only %d settings in the serve flags' usage: %v", len(want), want)
	}
	for _, name := range want {
		value, ok := passed[name]
		if !ok {
			t.Errorf("docker-compose.yml does not pass %s: set in .env, it would do nothing", name)
			continue
		}
		if name == "WORKBENCH_DATA_DIR" {
			if value != "/data" {
				t.Errorf("WORKBENCH_DATA_DIR = %q, want /data (the mounted volume)", value)
			}
			continue
		}
		if !regexp.MustCompile(`^\$\{` + name + `:-[^}]*\}$`).MatchString(value) {
			t.Errorf("docker-compose.yml passes %s as %q, want ${%s:-default}", name, value, name)
		}
	}
}

// TestEmptySettingKeepsTheDefault: compose passes a setting missing from
// .env as an empty value; the portal then keeps its default rather than
// reading "" (no OIDC scopes, an idle timeout of nothing).
func TestEmptySettingKeepsTheDefault(t *testing.T) {
	for _, name := range []string{"WORKBENCH_IDLE_TIMEOUT", "WORKBENCH_OIDC_SCOPES", "WORKBENCH_SAVED_IMAGE_QUOTA_GIB", "WORKBENCH_MIN_CHARGE", "WORKBENCH_CURRENCY", "WORKBENCH_LOCAL_LOGIN"} {
		t.Setenv(name, "")
	}
	var c web.Config
	c.BindFlags(flag.NewFlagSet("serve", flag.ContinueOnError))
	if c.Workbenches.DefaultIdle != time.Hour {
		t.Errorf("empty WORKBENCH_IDLE_TIMEOUT: idle timeout %s, want the default 1h", c.Workbenches.DefaultIdle)
	}
	if c.OIDCScopes != "openid profile email groups" {
		t.Errorf("empty WORKBENCH_OIDC_SCOPES: scopes %q, want the default", c.OIDCScopes)
	}
	if c.SavedImageQuotaGiB != 50 {
		t.Errorf("empty WORKBENCH_SAVED_IMAGE_QUOTA_GIB: %d, want the default 50", c.SavedImageQuotaGiB)
	}
	if c.Workbenches.MinCharge != 60*time.Second {
		t.Errorf("empty WORKBENCH_MIN_CHARGE: %s, want the default 60s", c.Workbenches.MinCharge)
	}
	if c.Currency != "USD" || c.LocalLogin != "all" {
		t.Errorf("empty currency / local login: %q / %q, want USD / all", c.Currency, c.LocalLogin)
	}
	c.DataDir = t.TempDir()
	if err := c.Validate(); err != nil {
		t.Errorf("Validate with empty settings: %v", err)
	}
}

// A currency must be one of ISO 4217, not any three capitals: "XYZ" was
// taken, and every price and statement then read "XYZ".
func TestCurrencyMustBeISO4217(t *testing.T) {
	for code, ok := range map[string]bool{"USD": true, "CNY": true, "EUR": true, "XYZ": false, "XXX": false, "usd": false} {
		var c web.Config
		c.BindFlags(flag.NewFlagSet("serve", flag.ContinueOnError))
		c.DataDir, c.Currency = t.TempDir(), code
		err := c.Validate()
		if ok && err != nil {
			t.Errorf("%s: %v", code, err)
		}
		if !ok && (err == nil || !strings.Contains(err.Error(), "WORKBENCH_CURRENCY")) {
			t.Errorf("%s: %v, want a refusal naming WORKBENCH_CURRENCY", code, err)
		}
	}
}
