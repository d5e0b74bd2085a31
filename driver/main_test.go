package driver_test

import (
	"os"
	"testing"
)

// TestMain removes what the tests built once for all of them (the runtime
// harness's fixed parts).
func TestMain(m *testing.M) {
	code := m.Run()
	removeHarnessKit()
	os.Exit(code)
}
