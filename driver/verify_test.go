package driver_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/verify"
)

func hexSum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// TestVerifyPlanFile runs VerifyPlanFile on file trees laid out per case.
// Paths in a case are relative to a fresh root directory, and the current
// directory is ROOT/cwd. In messages ROOT, SUM (hello_world's sha256) and
// OTHER (micro_speech's) stand for their values.
func TestVerifyPlanFile(t *testing.T) {
	model, err := os.ReadFile("../testdata/models/hello_world_int8.tflite")
	require.NoError(t, err)
	other, err := os.ReadFile("../testdata/models/micro_speech_quantized.tflite")
	require.NoError(t, err)
	out, err := driver.Compile(context.Background(), model, testConfig("hello_world_int8"))
	require.NoError(t, err)
	good := out.PlanJSON
	sum, otherSum := hexSum(model), hexSum(other)
	unnamed := []byte(strings.Replace(string(good), `"sha256": "`+sum+`"`, `"sha256": ""`, 1))
	require.NotEqual(t, good, unnamed, "plan.json records the model's sha256")
	// Every scratch tensor at offset 0: tensors live together now overlap.
	overlapping := []byte(strings.ReplaceAll(string(good), `"offset": 16,`, `"offset": 0,`))
	require.NotEqual(t, good, overlapping, "the plan has a tensor at offset 16")
	// The C files of the plan, and of another run (another planner).
	header, source := out.CFiles[0].Data, out.CFiles[1].Data
	linearCfg := testConfig("hello_world_int8")
	linearCfg.Plan.Planner = "linear"
	linear, err := driver.Compile(context.Background(), model, linearCfg)
	require.NoError(t, err)
	oldHeader, oldSource := linear.CFiles[0].Data, linear.CFiles[1].Data
	hash, oldHash := out.Plan.Hash(), linear.Plan.Hash()
	require.NotEqual(t, hash, oldHash)

	tests := []struct {
		name  string
		files map[string][]byte // relative to ROOT
		plan  string            // the plan argument, relative to ROOT
		model string            // the model argument, relative to ROOT; "" finds it

		wantPlan, wantModel string // relative to ROOT; "" when there is no report
		errPart             string // the whole message or a part of it
		errIs               error
		notNamed            bool   // a *driver.ModelNotNamedError
		violation           string // a *driver.VerifyError with a violation of this kind
	}{
		{
			name:  "plan in DIR, model given",
			files: map[string][]byte{"out/plan.json": good, "m.tflite": model},
			plan:  "out", model: "m.tflite",
			wantPlan: "out/plan.json", wantModel: "m.tflite",
		},
		{
			name:  "plan.json path, model given",
			files: map[string][]byte{"out/plan.json": good, "m.tflite": model},
			plan:  "out/plan.json", model: "m.tflite",
			wantPlan: "out/plan.json", wantModel: "m.tflite",
		},
		{
			name:     "model found by hash in the plan's directory",
			files:    map[string][]byte{"out/plan.json": good, "out/a.tflite": other, "out/renamed.tflite": model},
			plan:     "out",
			wantPlan: "out/plan.json", wantModel: "out/renamed.tflite",
		},
		{
			name:     "model found by hash in the parent, as .bin",
			files:    map[string][]byte{"out/plan.json": good, "out/a.tflite": other, "model.bin": model},
			plan:     "out/plan.json",
			wantPlan: "out/plan.json", wantModel: "model.bin",
		},
		{
			name:     "model found by hash in the current directory",
			files:    map[string][]byte{"a/out/plan.json": good, "cwd/hello.tflite": model},
			plan:     "a/out",
			wantPlan: "a/out/plan.json", wantModel: "cwd/hello.tflite",
		},
		{
			name:    "no model with the plan's hash",
			files:   map[string][]byte{"a/out/plan.json": good, "a/out/other.tflite": other, "cwd/other.bin": other},
			plan:    "a/out",
			errPart: "verify: no model with sha256 SUM next to ROOT/a/out/plan.json; give it: heliac verify MODEL ROOT/a/out/plan.json",
		},
		{
			name:  "given model has another sha256",
			files: map[string][]byte{"out/plan.json": good, "other.tflite": other},
			plan:  "out", model: "other.tflite",
			errPart: "verify: ROOT/out/plan.json was made for a model with sha256 SUM, but ROOT/other.tflite has OTHER",
		},
		{
			name:     "plan names no sha256, model not given",
			files:    map[string][]byte{"out/plan.json": unnamed, "out/m.tflite": model},
			plan:     "out",
			errPart:  "verify: ROOT/out/plan.json names no model sha256; give the model: heliac verify MODEL ROOT/out/plan.json",
			notNamed: true,
		},
		{
			name:  "plan names no sha256, model given",
			files: map[string][]byte{"out/plan.json": unnamed, "m.tflite": model},
			plan:  "out", model: "m.tflite",
			wantPlan: "out/plan.json", wantModel: "m.tflite",
		},
		{
			name:     "plan file named by prefix, with its C files",
			files:    map[string][]byte{"out/hw.plan.json": good, "out/hw.h": header, "out/hw.c": source, "out/hello_world_int8.tflite": model},
			plan:     "out",
			wantPlan: "out/hw.plan.json", wantModel: "out/hello_world_int8.tflite",
		},
		{
			name:  "header from another run",
			files: map[string][]byte{"out/hw.plan.json": good, "out/hw.h": oldHeader, "out/hw.c": source, "m.tflite": model},
			plan:  "out/hw.plan.json", model: "m.tflite",
			errPart: "verify: ROOT/out/hw.h has plan hash OLDHASH, but ROOT/out/hw.plan.json has HASH: the files come from different runs of heliac; run heliac again to write the set whole",
		},
		{
			name:  "source from another run",
			files: map[string][]byte{"out/hw.plan.json": good, "out/hw.h": header, "out/hw.c": oldSource, "m.tflite": model},
			plan:  "out", model: "m.tflite",
			errPart: "verify: ROOT/out/hw.c has plan hash OLDHASH, but ROOT/out/hw.plan.json has HASH",
		},
		{
			name:  "a C file heliac did not write",
			files: map[string][]byte{"out/hw.plan.json": good, "out/hw.c": []byte("int hw;\n"), "m.tflite": model},
			plan:  "out", model: "m.tflite",
			errPart: "verify: ROOT/out/hw.c carries no heliac plan hash, so it is not the C file of ROOT/out/hw.plan.json; move it away or run heliac again",
		},
		{
			name:  "plan.json, as heliac named plans before, has no C files",
			files: map[string][]byte{"out/plan.json": good, "out/hello_world_int8.h": oldHeader, "out/plan.h": oldHeader, "m.tflite": model},
			plan:  "out", model: "m.tflite",
			wantPlan: "out/plan.json", wantModel: "m.tflite",
		},
		{
			name:  "two plan files in DIR",
			files: map[string][]byte{"out/a.plan.json": good, "out/plan.json": good, "m.tflite": model},
			plan:  "out", model: "m.tflite",
			errPart: "verify: ROOT/out holds 2 plan files (a.plan.json, plan.json); name one",
		},
		{
			name:  "no plan file in DIR",
			files: map[string][]byte{"out/other.json": good, "out/.plan.json": good, "m.tflite": model},
			plan:  "out", model: "m.tflite",
			errPart: "verify: no plan file (<prefix>.plan.json) in ROOT/out",
		},
		{
			name:  "missing plan file",
			files: map[string][]byte{"out/other.json": good, "m.tflite": model},
			plan:  "out/plan.json", model: "m.tflite",
			errPart: "ROOT/out/plan.json",
			errIs:   fs.ErrNotExist,
		},
		{
			name:  "missing model",
			files: map[string][]byte{"out/plan.json": good},
			plan:  "out", model: "m.tflite",
			errPart: "ROOT/m.tflite",
			errIs:   fs.ErrNotExist,
		},
		{
			name:  "corrupt plan, model given",
			files: map[string][]byte{"out/plan.json": []byte(`{"model": `), "m.tflite": model},
			plan:  "out", model: "m.tflite",
			wantPlan: "out/plan.json", wantModel: "m.tflite",
			errPart:   "ROOT/out/plan.json: verify: plan has 1 violation(s)",
			violation: "Malformed",
		},
		{
			name:     "corrupt plan, model not given",
			files:    map[string][]byte{"out/plan.json": []byte(`{"model": `), "out/m.tflite": model},
			plan:     "out",
			errPart:  "names no model sha256",
			notNamed: true,
		},
		{
			name:  "corrupt model",
			files: map[string][]byte{"out/plan.json": unnamed, "m.tflite": []byte("0123TFL3garbage")},
			plan:  "out", model: "m.tflite",
			errPart: "verify ROOT/m.tflite: tflite:",
		},
		{
			name:  "violating plan",
			files: map[string][]byte{"out/plan.json": overlapping, "m.tflite": model},
			plan:  "out", model: "m.tflite",
			wantPlan: "out/plan.json", wantModel: "m.tflite",
			errPart:   "ROOT/out/plan.json: verify: plan has",
			violation: "Overlap",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(root, "cwd"), 0o755))
			for name, data := range tt.files {
				p := filepath.Join(root, name)
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, data, 0o644))
			}
			t.Chdir(filepath.Join(root, "cwd"))
			modelArg := ""
			if tt.model != "" {
				modelArg = filepath.Join(root, tt.model)
			}

			r, err := driver.VerifyPlanFile(filepath.Join(root, tt.plan), modelArg)

			if tt.wantPlan == "" {
				assert.Nil(t, r)
			} else if assert.NotNil(t, r) {
				assert.Equal(t, filepath.Join(root, tt.wantPlan), r.Plan)
				abs, aerr := filepath.Abs(r.Model)
				require.NoError(t, aerr)
				assert.Equal(t, filepath.Join(root, tt.wantModel), abs)
			}
			if tt.errPart == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			want := strings.NewReplacer("ROOT", root, "OLDHASH", oldHash, "HASH", hash, "SUM", sum, "OTHER", otherSum).Replace(tt.errPart)
			assert.Contains(t, err.Error(), want)
			if tt.errIs != nil {
				assert.ErrorIs(t, err, tt.errIs)
			}
			var mn *driver.ModelNotNamedError
			assert.Equal(t, tt.notNamed, errors.As(err, &mn), "ModelNotNamedError")
			var ve *driver.VerifyError
			if assert.Equal(t, tt.violation != "", errors.As(err, &ve), "VerifyError") && ve != nil {
				assert.True(t, hasKind(ve.Violations, tt.violation), "no %s violation in %v", tt.violation, ve.Violations)
			}
		})
	}
}

// hasKind reports whether a violation of the named kind is among vs.
func hasKind(vs []verify.Violation, kind string) bool {
	for _, v := range vs {
		if v.Kind.String() == kind {
			return true
		}
	}
	return false
}
