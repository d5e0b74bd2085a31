package exampletest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SpeedRules is a board's rules file that chooses banks for speed as well
// as size (a constant class rule with hottest: the constants read most per
// byte staged into a fast bank), as RunSpeed runs it.
type SpeedRules struct {
	File  string      // the rules file, in the board's folder (stage-hot.yaml)
	Build KernelBuild // the kernel build it runs with
	// Fast is the bank the hottest constants are staged into, Budget the
	// rule's hottest bytes; they come from the board's Image.
	Fast   string
	Budget int64
	// CIModel is the corpus model make test runs; HELIAC_FULL_SWEEP=1
	// runs every one of the board's CorpusModels.
	CIModel string
}

// bankBytes is one entry of plan.json's bank_traffic.
type bankBytes struct {
	Bank    string `json:"bank"`
	Read    int64  `json:"read"`
	Written int64  `json:"written"`
}

// RunSpeed is a board's TestQEMUSpeed: each model planned with the speed
// rules and the default (stage-none.yaml), with one kernel build. With
// the speed rules heliac's program must print the runner's lines on the
// original model (one seed, three invocations), the hottest constants
// must be staged into the fast bank within the budget (some, where the
// image's bank is read per inference at all), and the plan's
// bank_traffic must show the bytes they are read moved out of the image's
// bank: the image reads fewer bytes per inference than under the default
// rules and every bank together the same (the estimate counts each
// tensor's reads wherever it lies). The caller skips under the race
// detector. Run from the board's test folder.
func RunSpeed(t *testing.T, board Board, s SpeedRules) {
	board.Builds = []KernelBuild{s.Build}
	e := setup(t, board)
	if len(e.builds) == 0 {
		t.Skipf("KERNELS=%s: no library or runner", s.Build.Name)
	}
	rules, err := filepath.Abs(filepath.Join("..", s.File))
	require.NoError(t, err)
	none, err := filepath.Abs(filepath.Join("..", "..", "common", "stage-none.yaml"))
	require.NoError(t, err)
	var models []string
	for _, m := range e.CorpusModels {
		if _, out := e.Excluded[m]; !out && (m == s.CIModel || os.Getenv("HELIAC_FULL_SWEEP") != "") {
			models = append(models, m)
		}
	}
	require.NotEmpty(t, models, "no model to run: %s is not among the board's corpus models", s.CIModel)
	t.Run("models", func(t *testing.T) {
		for _, name := range models {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				model := filepath.Join(e.shared, "corpus", name)
				dir := t.TempDir()
				mk := func(dir, rules string, args []string, targets ...string) ([]byte, error) {
					return e.make(t, model, dir, args, append([]string{"KERNELS=" + s.Build.Name, "RULES=" + rules}, targets...)...)
				}
				args := []string{"--seed", strconv.Itoa(seeds[0]), "--invokes", "3"}
				out, err := mk(dir, rules, args, "check")
				if err != nil && strings.Contains(err.Error(), "TFLM has no kernel for it in this build of heliac") {
					t.Skip(err)
				}
				require.NoError(t, err)
				assert.Equal(t, e.want(t, s.Build, model, seeds[0]), results(out), "%s: heliac's program differs from %s", s.File, s.Build.Runner)

				var staged int64
				for _, a := range planArenas(t, filepath.Join(dir, "gen", "model.plan.json")) {
					if a["role"] == "constant" && a["memory"] == s.Fast && a["source_memory"] == e.Image {
						staged += int64(a["size"].(float64))
					}
				}
				assert.LessOrEqual(t, staged, s.Budget, "constants staged into %s", s.Fast)
				_, err = mk(filepath.Join(dir, "none"), none, nil, filepath.Join(dir, "none", "gen", "model.c"))
				require.NoError(t, err)
				hot := bankTraffic(t, filepath.Join(dir, "gen", "model.plan.json"))
				cold := bankTraffic(t, filepath.Join(dir, "none", "gen", "model.plan.json"))
				sum := func(m map[string]bankBytes) (n int64) {
					for _, b := range m {
						n += b.Read
					}
					return n
				}
				assert.Equal(t, sum(cold), sum(hot), "bytes read per inference, every bank: %v with %s, %v without", hot, s.File, cold)
				if cold[e.Image].Read > 0 {
					// Some constant is read per inference: the hottest
					// fits the budget (none of the corpus models' is
					// larger), and its reads leave the image's bank.
					assert.Positive(t, staged, "constants staged into %s from %s", s.Fast, e.Image)
					assert.Less(t, hot[e.Image].Read, cold[e.Image].Read, "%s's bytes read per inference with %s", e.Image, s.File)
				}
				t.Logf("%s read per inference: %d with %s, %d with stage-none.yaml; %s: %d, %d; %d bytes staged",
					e.Image, hot[e.Image].Read, s.File, cold[e.Image].Read, s.Fast, hot[s.Fast].Read, cold[s.Fast].Read, staged)
			})
		}
	})
}

// bankTraffic reads a plan's bank_traffic, by bank.
func bankTraffic(t *testing.T, path string) map[string]bankBytes {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var p struct {
		BankTraffic []bankBytes `json:"bank_traffic"`
	}
	require.NoError(t, json.Unmarshal(data, &p))
	out := map[string]bankBytes{}
	for _, b := range p.BankTraffic {
		out[b.Bank] = b
	}
	return out
}
