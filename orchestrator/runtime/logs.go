package runtime

import (
	"context"
	"io"
	"strconv"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
)

// Logs returns the container's stdout and stderr, interleaved, as plain
// text. Closing the reader ends a follow.
func (d *Docker) Logs(ctx context.Context, id string, tail int, follow bool) (io.ReadCloser, error) {
	t := "all"
	if tail > 0 {
		t = strconv.Itoa(tail)
	}
	raw, err := d.cli.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: t, Follow: follow})
	if err != nil {
		return nil, engineErr("logs of container "+id, err)
	}
	// Containers are created without a TTY, so the engine multiplexes the
	// two streams with 8-byte frame headers; strip them.
	pr, pw := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(pw, pw, raw)
		pw.CloseWithError(err)
	}()
	return &logReader{PipeReader: pr, raw: raw}, nil
}

// logReader closes the engine stream too, which stops the copying
// goroutine.
type logReader struct {
	*io.PipeReader
	raw io.Closer
}

func (l *logReader) Close() error {
	err := l.raw.Close()
	l.PipeReader.Close()
	return err
}
