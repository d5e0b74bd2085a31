package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestReport: packages start and end with their counts, a failed test's
// output is printed whole and makes the report fail, build failures
// count, and the last lines count everything, skipped tests with their
// reasons ("0 skipped" too).
func TestReport(t *testing.T) {
	now := func() time.Time { return time.Date(2026, 12, 7, 1, 2, 3, 0, time.UTC) }
	tests := []struct {
		name, in string
		ok       bool
		want     []string
	}{
		{"all pass", `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"noise\n"}
{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0.1}
{"Action":"pass","Package":"p","Test":"TestSlow","Elapsed":25}
{"Action":"pass","Package":"p","Elapsed":26.5}
{"Action":"skip","Package":"q"}
`, true, []string{"01:02:03 start p\n", "01:02:03 ok    p 26.5s (2 passed, 0 skipped)\n         slowest: TestSlow 25.0s\n", "01:02:03 ok    q (no tests)\n",
			"2 package(s), 0 failed; 2 test(s) passed, 0 failed, 0 skipped\n"}},
		{"a skip and a failure", `{"Action":"start","Package":"p"}
{"Action":"output","Package":"p","Test":"TestS","Output":"    s_test.go:9: ../shared not found\n"}
{"Action":"output","Package":"p","Test":"TestS","Output":"--- SKIP: TestS (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestS"}
{"Action":"output","Package":"p","Test":"TestF","Output":"    f_test.go:3: want 1, got 2\n"}
{"Action":"output","Package":"p","Test":"TestF/sub","Output":"sub detail\n"}
{"Action":"fail","Package":"p","Test":"TestF/sub"}
{"Action":"fail","Package":"p","Test":"TestF"}
{"Action":"fail","Package":"p","Elapsed":2}
`, false, []string{"--- FAIL: p TestF\n    f_test.go:3: want 1, got 2\n", "sub detail\n", "FAIL  p 2.0s (0 passed, 1 skipped, 1 failed)\n",
			"1 package(s), 1 failed; 0 test(s) passed, 1 failed, 1 skipped\n", "     1 skipped: ../shared not found\n"}},
		{"a build failure", `{"ImportPath":"b.test","Action":"build-output","Output":"# b\n"}
{"ImportPath":"b.test","Action":"build-output","Output":"b_test.go:3:33: expected operand\n"}
{"ImportPath":"b.test","Action":"build-fail"}
{"Action":"start","Package":"b"}
{"Action":"output","Package":"b","Output":"FAIL\tb [setup failed]\n"}
{"Action":"fail","Package":"b","Elapsed":0,"FailedBuild":"b.test"}
not json
`, false, []string{"# b\nb_test.go:3:33: expected operand\nFAIL\tb [setup failed]\nFAIL  b 0.0s", "not json\n", "1 package(s), 1 failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			assert.Equal(t, tt.ok, report(strings.NewReader(tt.in), &b, now))
			for _, w := range tt.want {
				assert.Contains(t, b.String(), w)
			}
		})
	}
}
