package runtime

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestEngineUnavailable needs no engine: a client pointed at a socket that
// does not exist must say ErrEngineUnavailable, from DOCKER_HOST or option.
func TestEngineUnavailable(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent.sock")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	d, err := NewDocker()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Ping(ctx); !errors.Is(err, ErrEngineUnavailable) {
		t.Errorf("Ping = %v, want ErrEngineUnavailable", err)
	}
	if _, err := d.List(ctx, "x"); !errors.Is(err, ErrEngineUnavailable) {
		t.Errorf("List = %v, want ErrEngineUnavailable", err)
	}
	if err := d.EnsureImage(ctx, "x:1", nil); !errors.Is(err, ErrEngineUnavailable) {
		t.Errorf("EnsureImage = %v, want ErrEngineUnavailable", err)
	}

	d2, err := NewDocker(WithHost("unix:///nonexistent.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if err := d2.Ping(ctx); !errors.Is(err, ErrEngineUnavailable) {
		t.Errorf("Ping via WithHost = %v, want ErrEngineUnavailable", err)
	}

	if _, err := NewDocker(WithHost("not a host")); !errors.Is(err, ErrEngineUnavailable) {
		t.Errorf("NewDocker with bad host = %v, want ErrEngineUnavailable", err)
	}
}
