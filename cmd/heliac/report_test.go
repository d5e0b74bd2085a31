package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/internal/corpus"
)

// chromiumNames are the headless browsers the report test runs.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// needChromium returns a headless browser's path or skips the test.
func needChromium(t *testing.T) string {
	t.Helper()
	for _, name := range chromiumNames {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skipf("no headless browser on PATH (%s); .ci/run installs Debian's chromium", strings.Join(chromiumNames, ", "))
	return ""
}

var bodyRE = regexp.MustCompile(`<body ([^>]*)>`)

// TestReportInChromium writes reports with --report and loads each in
// headless Chromium: the page runs without a script error or console
// message, and its script finds one box per planned allocation.
func TestReportInChromium(t *testing.T) {
	browser := needChromium(t)
	models, err := filepath.Glob("../../testdata/models/*.tflite")
	require.NoError(t, err)
	if shared := corpus.SharedDir(); shared != "" {
		for _, f := range []string{"mlperf-tiny/vww_96_int8.tflite", "esphome-mww/okay_nabu_v2.tflite", "tflite-micro/dp_net.tflite"} {
			if _, err := os.Stat(filepath.Join(shared, "corpus", f)); err == nil {
				models = append(models, filepath.Join(shared, "corpus", f))
			}
		}
	}
	for _, model := range models {
		t.Run(filepath.Base(model), func(t *testing.T) {
			out := t.TempDir()
			code, _, stderr := runHeliac(model, "-o", out, "--report", "-q")
			require.Equal(t, exitOK, code, stderr)
			pages, err := filepath.Glob(filepath.Join(out, "*.report.html"))
			require.NoError(t, err)
			require.Len(t, pages, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
				"--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+pages[0])
			var dom, log bytes.Buffer
			cmd.Stdout, cmd.Stderr = &dom, &log
			require.NoError(t, cmd.Run(), log.String())
			body := bodyRE.FindStringSubmatch(dom.String())
			require.NotNil(t, body, "the page has a body")
			attrs := body[1]
			allocations := regexp.MustCompile(`data-allocations="(\d+)"`).FindStringSubmatch(attrs)
			boxes := regexp.MustCompile(`data-boxes="(\d+)"`).FindStringSubmatch(attrs)
			require.NotNil(t, allocations, attrs)
			require.NotNil(t, boxes, "the script ran to its end: %s", attrs)
			assert.Equal(t, allocations[1], boxes[1], "one box per planned allocation")
			assert.NotContains(t, attrs, "data-errors", "no script error")
			for _, line := range strings.Split(log.String(), "\n") {
				assert.NotContains(t, line, "CONSOLE", "no console message")
				assert.NotContains(t, line, "Uncaught")
			}
		})
	}
}
