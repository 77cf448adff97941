package web_test

// Browser tests: the lab's page in a real headless Chromium, driven only
// through the data-testid hooks of SPEC.md (Dashboard) with real clicks and
// keys, against a real lab server (startServer). One Chromium serves the whole
// test binary: it starts on the first browser test (sync.Once) and TestMain
// closes it. Every test has its own server, its own private lab and its own
// browser context (cookies such as the large-type switch stay in it), so the
// tests run in parallel without sharing state.
//
// Without Chromium the tests skip, except under CI=true, where they fail.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The one browser of the test binary.
var shared struct {
	once   sync.Once
	ctx    context.Context // a chromedp context whose browser is running
	cancel func()          // closes the browser and the allocator
	dir    string          // user data dir and TMPDIR, removed at the end
	err    error
}

var errNoChromium = errors.New("no Chromium found (install the Debian package chromium)")

// findChromium returns the path of a Chromium or Chrome binary.
func findChromium() (string, error) {
	for _, name := range []string{"chromium-headless-shell", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errNoChromium
}

func startBrowser() {
	bin, err := findChromium()
	if err != nil {
		shared.err = err
		return
	}
	dir, err := os.MkdirTemp("", "idemlab-browser-")
	if err != nil {
		shared.err = err
		return
	}
	shared.dir = dir
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		shared.err = err
		return
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.Env("TMPDIR="+tmp),
		chromedp.WindowSize(1440, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	// The first Run ties the browser's life to its context, so it gets no
	// deadline; a watchdog ends a start that hangs.
	started := make(chan struct{})
	go func() {
		select {
		case <-started:
		case <-time.After(60 * time.Second):
			cancelCtx()
		}
	}()
	err = chromedp.Do(ctx)
	close(started)
	if err != nil {
		cancelCtx()
		cancelAlloc()
		shared.err = fmt.Errorf("start %s: %w", bin, err)
		return
	}
	shared.ctx = ctx
	shared.cancel = func() {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		chromedp.Cancel(cctx)
		cancelCtx()
		cancelAlloc()
	}
}

func closeBrowser() {
	if shared.cancel != nil {
		shared.cancel()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
}

// browser returns the shared browser, starting it on first use. Without
// Chromium the test skips, or fails when CI=true.
func browser(t *testing.T) context.Context {
	t.Helper()
	shared.once.Do(startBrowser)
	if shared.err != nil {
		if errors.Is(shared.err, errNoChromium) && os.Getenv("CI") != "true" {
			t.Skip(shared.err)
		}
		t.Fatal(shared.err)
	}
	return shared.ctx
}
