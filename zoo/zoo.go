// Package zoo compiles many models at once: it finds the models under a set
// of folders, compiles them in parallel with a caller's compile function,
// keeps going past failures, and summarizes each model's result as a row of
// figures (summary.csv, summary.json).
//
// Input: folders and files; a compile function (the CLI's, with its flags).
// Output: Results in the order Find gave the models, and Rows. It imports
// driver, for the compiled output; it writes no model's files itself: the
// caller does, as it would for one model.
package zoo

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/heliac/heliac/driver"
	"github.com/heliac/heliac/internal/inputfile"
)

// Model is a model file Find found: its path, and its name, which names its
// output folder: the path below the folder it was found in, without the
// extension ("tflite-micro/person_detect"), under the folder's own name
// when several folders were given.
type Model struct {
	Path string
	Name string
	// Size is the file's bytes: Run starts larger models first.
	Size int64
	// Skip, when not empty, says why the entry is not compiled: it is
	// named like a model but is no regular file the main command would
	// read (a FIFO, a socket, a device, a broken symbolic link, a link
	// loop), or it is a link to a folder, which Find does not follow. Run
	// passes it over and Summarize lists it as Skipped.
	Skip string
}

// tflite is the file identifier of a TFLite flatbuffer, at byte 4.
const tflite = "TFL3"

// Find returns the model files under each of roots (a folder, searched
// recursively, or a file given itself), sorted by name: files named
// *.tflite, and any other regular file that carries TFLite's file
// identifier ("TFL3" at byte 4). A symbolic link to a regular file is
// found as that file is (the main command compiles it); an entry named
// *.tflite that is no regular file, and a link to a folder, are returned
// with Skip saying why. Folders whose real path is one of exclude (the
// zoo's output folder, so that a rerun does not compile the models an
// earlier run wrote there) are not searched. Two models of one name, or a
// root that cannot be read, are an error naming them.
func Find(roots []string, exclude ...string) ([]Model, error) {
	var out []Model
	byName := map[string]string{}
	skipDirs := map[string]bool{}
	for _, e := range exclude {
		if resolved, ok := realPath(e); ok {
			skipDirs[resolved] = true
		}
	}
	for _, root := range roots {
		st, err := os.Stat(root)
		if err != nil {
			return nil, err
		}
		prefix := ""
		if len(roots) > 1 && st.IsDir() {
			prefix = filepath.Base(filepath.Clean(root)) + "/"
		}
		add := func(path, rel string, size int64, skip string) error {
			name := prefix + filepath.ToSlash(strings.TrimSuffix(rel, filepath.Ext(rel)))
			if other, dup := byName[name]; dup {
				return fmt.Errorf("zoo: %s and %s would both write the folder %s; give them in separate runs", other, path, name)
			}
			byName[name] = path
			out = append(out, Model{Path: path, Name: name, Size: size, Skip: skip})
			return nil
		}
		if !st.IsDir() {
			if err := add(root, filepath.Base(root), st.Size(), ""); err != nil {
				return nil, err
			}
			continue
		}
		// Walk the folder's real path, so that a root given as a link is
		// searched; paths are reported under root as given.
		resolved, ok := realPath(root)
		if !ok {
			return nil, fmt.Errorf("zoo: cannot resolve the folder %s", root)
		}
		err = filepath.WalkDir(resolved, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && skipDirs[path] {
				return filepath.SkipDir
			}
			rel, err := filepath.Rel(resolved, path)
			if err != nil {
				return err
			}
			given := filepath.Join(root, rel)
			if d.Type().IsRegular() {
				if !isModel(path) {
					return nil
				}
				info, err := d.Info()
				if err != nil {
					return err
				}
				return add(given, rel, info.Size(), "")
			}
			if d.IsDir() {
				return nil
			}
			size, skip := classify(path, d)
			switch {
			case skip == "" && !isModel(path):
				return nil
			case skip != "" && skip != dirLink && !named(path):
				return nil
			}
			return add(given, rel, size, skip)
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b Model) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// realPath is path made absolute with every symbolic link resolved, and
// whether it exists.
func realPath(path string) (string, bool) {
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", false
	}
	resolved, err = filepath.Abs(resolved)
	return resolved, err == nil
}

// classify looks at an entry that is neither a regular file nor a folder:
// for a symbolic link to a regular file, the file's size and ""; otherwise
// why it is not compiled.
func classify(path string, d fs.DirEntry) (size int64, skip string) {
	if d.Type()&fs.ModeSymlink == 0 {
		return 0, "not a regular file but " + inputfile.TypeName(d.Type())
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, "a broken symbolic link"
	case errors.Is(err, syscall.ELOOP):
		return 0, "a symbolic link loop"
	case err != nil:
		return 0, "a symbolic link that cannot be followed: " + err.Error()
	case st.IsDir():
		return 0, dirLink
	case !st.Mode().IsRegular():
		return 0, "a symbolic link to " + inputfile.TypeName(st.Mode().Type()) + ", not a regular file"
	}
	return st.Size(), ""
}

// dirLink is why a symbolic link to a folder is skipped: following links
// to folders could search a folder twice, or forever around a loop.
const dirLink = "a symbolic link to a folder, which zoo does not follow (give the folder itself)"

// named reports whether path is named like a model (*.tflite).
func named(path string) bool { return strings.EqualFold(filepath.Ext(path), ".tflite") }

// isModel reports whether path names a model: *.tflite, or a file whose
// bytes 4 to 8 are TFLite's identifier.
func isModel(path string) bool {
	if named(path) {
		return true
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 8)
	n, _ := f.Read(head)
	return n == 8 && string(head[4:]) == tflite
}

// Compile compiles one model; Run calls it from several goroutines.
type Compile func(ctx context.Context, m Model) (*driver.Output, error)

// Result is one model's compile: its output, or the error that stopped it,
// and how long it took.
type Result struct {
	Model   Model
	Output  *driver.Output
	Err     error
	Elapsed time.Duration
}

// Run compiles models with jobs goroutines (at least 1), calling done with
// each result as it finishes (one call at a time, in the order they
// finish), and returns the results in the order of models. A model with
// Skip set is not compiled: its result has no output and no error. Larger models
// start first (Model.Size, a proxy for the compile's time), so that no
// long compile starts last while the other goroutines idle. A failed
// model does not stop the others, nor does one whose compile panics (its
// error is a *PanicError); a canceled ctx stops handing out models, and
// those not started get ctx's error.
func Run(ctx context.Context, models []Model, jobs int, compile Compile, done func(Result)) []Result {
	results := make([]Result, len(models))
	next := make(chan int)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range max(jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := Result{Model: models[i]}
				if models[i].Skip == "" {
					start := time.Now()
					out, err := call(ctx, compile, models[i])
					r.Output, r.Err, r.Elapsed = out, err, time.Since(start)
					if err != nil {
						r.Output = nil
					}
				}
				results[i] = r
				if done != nil {
					mu.Lock()
					done(r)
					mu.Unlock()
				}
			}
		}()
	}
	order := make([]int, len(models))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(models[b].Size, models[a].Size) })
	started := make([]bool, len(models))
feed:
	for _, i := range order {
		if ctx.Err() != nil {
			break
		}
		select {
		case next <- i:
			started[i] = true
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	for i, ok := range started {
		if !ok {
			results[i] = Result{Model: models[i]}
			if models[i].Skip == "" {
				results[i].Err = ctx.Err()
			}
		}
	}
	return results
}

// PanicError is a compile that panicked: a heliac bug, never a problem
// with the model. Run recovers it as that model's error, so that the other
// models go on and the summary is written.
type PanicError struct {
	Value any    // what the compile panicked with
	Stack []byte // the stack of the goroutine that panicked, where it did
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("heliac bug: the compile panicked: %v (please report it with the model)", e.Value)
}

// call runs compile on m, and returns a panic as a *PanicError.
func call(ctx context.Context, compile Compile, m Model) (out *driver.Output, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return compile(ctx, m)
}

// Row is a result's figures, as summary.csv and summary.json give them:
// the model's name and path, ok, failed with the error or skipped with
// the reason (Model.Skip), the plan's steps
// and arenas, and over its scratch arenas the lower bound, the bytes
// planned (tensors and kernel scratch), how far above the bound in
// percent, the kernel scratch bytes, the compile's milliseconds, and
// whether a search stopped on the wall clock.
type Row struct {
	Model         string  `json:"model"`
	Path          string  `json:"path"`
	Status        string  `json:"status"`
	Error         string  `json:"error,omitempty"`
	Steps         int     `json:"steps"`
	Arenas        int     `json:"arenas"`
	Bound         int64   `json:"bound"`
	Arena         int64   `json:"arena"`
	OverBound     float64 `json:"over_bound"`
	KernelScratch int64   `json:"kernel_scratch"`
	Milliseconds  float64 `json:"milliseconds"`
	// TimedOut says the order search or the planner stopped on its wall
	// clock rather than its work budget, as on a loaded machine: the
	// figures may then differ from another run's.
	TimedOut bool `json:"timed_out"`
	// TFLMOwnHead is the head TFLM's own planner needs for the model
	// (driver.TFLM), VsTFLM the plan's head minus it (negative where
	// heliac needs less) and VsTFLMPercent that in percent of it; Kept
	// says whose placement the plan keeps. All are empty where the plan
	// is not compared with TFLM's (several scratch arenas).
	TFLMOwnHead   int64   `json:"tflm_own_head,omitempty"`
	VsTFLM        int64   `json:"vs_tflm,omitempty"`
	VsTFLMPercent float64 `json:"vs_tflm_percent,omitempty"`
	Kept          string  `json:"kept,omitempty"`
	// TFLMTarget, TFLMArenaBytes and TFLMOwnArenaBytes are, with
	// --emit-tflite, TFLM's whole tensor_arena (head, persistent tail,
	// temporaries) for the emitted model and for the original under
	// TFLM's own planner, on that target (driver.TFLMArenas); empty
	// otherwise.
	TFLMTarget        string `json:"tflm_target,omitempty"`
	TFLMArenaBytes    int64  `json:"tflm_arena_bytes,omitempty"`
	TFLMOwnArenaBytes int64  `json:"tflm_own_arena_bytes,omitempty"`
	// StripeK is the number of stripes of each region the compiled model
	// runs stripe by stripe (--patches; graph.Model.Stripes), ExtraMACs
	// the multiply-accumulates the stripes compute again and
	// ExtraMACsPercent that in percent of the original model's; empty
	// for a model compiled as given.
	StripeK          []int   `json:"stripe_k,omitempty"`
	ExtraMACs        int64   `json:"extra_macs,omitempty"`
	ExtraMACsPercent float64 `json:"extra_macs_percent,omitempty"`
	// TFLMRuns says whether stock TFLM runs the model, as far as
	// heliac's checks tell (driver.Output.TFLMRefusals), and TFLMRefuses
	// why not: the first reason, and how many more there are. Both are
	// empty for a model that failed or was skipped.
	TFLMRuns    *bool  `json:"tflm_runs,omitempty"`
	TFLMRefuses string `json:"tflm_refuses,omitempty"`
}

// Statuses of a Row.
const (
	OK     = "ok"
	Failed = "failed"
	// Skipped is an entry Find found but did not take for a model the
	// main command would compile (Model.Skip); Error says why.
	Skipped = "skipped"
)

// Summarize turns results into rows, in their order.
func Summarize(results []Result) []Row {
	rows := make([]Row, len(results))
	for i, r := range results {
		row := Row{Model: r.Model.Name, Path: filepath.ToSlash(r.Model.Path), Status: OK,
			Milliseconds: float64(r.Elapsed.Microseconds()) / 1000}
		if r.Model.Skip != "" && r.Err == nil {
			row.Status, row.Error = Skipped, r.Model.Skip
			rows[i] = row
			continue
		}
		if r.Err != nil || r.Output == nil {
			row.Status = Failed
			if r.Err != nil {
				row.Error = firstLine(r.Err.Error())
			}
			rows[i] = row
			continue
		}
		p := r.Output.Plan
		row.Steps, row.Arenas = p.Schedule.Steps, len(p.Arenas)
		row.Arena, row.Bound = p.ScratchTotals()
		_, _, row.KernelScratch = p.KernelScratch()
		row.TimedOut = p.Schedule.Ordering.TimedOut
		for _, a := range p.Arenas {
			row.TimedOut = row.TimedOut || a.TimedOut > 0
		}
		if row.Bound > 0 {
			row.OverBound = float64(row.Arena-row.Bound) / float64(row.Bound) * 100
		}
		if t := r.Output.TFLM; t != nil {
			row.TFLMOwnHead, row.VsTFLM, row.Kept = t.OwnHead, t.Head-t.OwnHead, t.Kept
			if t.OwnHead > 0 {
				row.VsTFLMPercent = float64(t.Head-t.OwnHead) / float64(t.OwnHead) * 100
			}
		}
		if a := r.Output.TFLMArena; a != nil {
			row.TFLMTarget, row.TFLMArenaBytes, row.TFLMOwnArenaBytes = a.Target, a.Emitted.Bytes, a.Original.Bytes
		}
		stripeFigures(&row, r.Output)
		runs := len(r.Output.TFLMRefusals) == 0
		row.TFLMRuns = &runs
		if !runs {
			row.TFLMRefuses = r.Output.TFLMRefusals[0].String()
			if n := len(r.Output.TFLMRefusals) - 1; n > 0 {
				row.TFLMRefuses += fmt.Sprintf(" (and %d more)", n)
			}
		}
		rows[i] = row
	}
	return rows
}

// stripeFigures fills a row's stripe columns from the compiled model's
// record. The original model's MACs are the rewritten model's less what
// the stripes compute again.
func stripeFigures(row *Row, out *driver.Output) {
	m := out.Model
	if m == nil || len(m.Stripes) == 0 {
		return
	}
	for _, r := range m.Stripes {
		row.StripeK = append(row.StripeK, r.K())
		row.ExtraMACs += r.ExtraMACs
	}
	var total int64
	for s := range m.Subgraphs {
		sg := &m.Subgraphs[s]
		for _, op := range sg.Ops {
			name := op.Name()
			if (name != "CONV_2D" && name != "DEPTHWISE_CONV_2D") || len(op.Inputs) < 2 || len(op.Outputs) < 1 || op.Inputs[1] < 0 || op.Outputs[0] < 0 {
				continue
			}
			o, f := sg.Tensors[op.Outputs[0]].Shape, sg.Tensors[op.Inputs[1]].Shape
			if len(o) != 4 || len(f) != 4 {
				continue
			}
			n := int64(o[1]) * int64(o[2]) * int64(o[3]) * int64(f[1]) * int64(f[2])
			if name == "CONV_2D" {
				n *= int64(f[3])
			}
			total += n
		}
	}
	if orig := total - row.ExtraMACs; orig > 0 {
		row.ExtraMACsPercent = float64(row.ExtraMACs) / float64(orig) * 100
	}
}

// firstLine is an error's first line: the rest are details.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// CSV renders rows as summary.csv: a header and a line per row, numbers
// as Go formats them (over_bound with two decimals, vs_tflm_percent with
// four, so that a few bytes above TFLM's never read 0, milliseconds with
// one; the TFLM columns empty where the plan is not compared; stripe_k
// the regions' k joined by "+", extra_macs_percent with two decimals,
// both with extra_macs empty for a model compiled as given; tflm_runs
// true or false, tflm_refuses why not, both empty for a model not
// compiled).
func CSV(rows []Row) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{"model", "path", "status", "error", "steps", "arenas", "bound", "arena", "over_bound", "kernel_scratch", "milliseconds", "timed_out",
		"tflm_own_head", "vs_tflm", "vs_tflm_percent", "kept", "tflm_target", "tflm_arena_bytes", "tflm_own_arena_bytes",
		"stripe_k", "extra_macs", "extra_macs_percent", "tflm_runs", "tflm_refuses"})
	for _, r := range rows {
		tflm := []string{"", "", "", ""}
		if r.Kept != "" {
			tflm = []string{strconv.FormatInt(r.TFLMOwnHead, 10), strconv.FormatInt(r.VsTFLM, 10),
				strconv.FormatFloat(r.VsTFLMPercent, 'f', 4, 64), r.Kept}
		}
		whole := []string{"", "", ""}
		if r.TFLMTarget != "" {
			whole = []string{r.TFLMTarget, strconv.FormatInt(r.TFLMArenaBytes, 10), strconv.FormatInt(r.TFLMOwnArenaBytes, 10)}
		}
		tflm = append(tflm, whole...)
		stripes := []string{"", "", ""}
		if len(r.StripeK) > 0 {
			ks := make([]string, len(r.StripeK))
			for j, k := range r.StripeK {
				ks[j] = strconv.Itoa(k)
			}
			stripes = []string{strings.Join(ks, "+"), strconv.FormatInt(r.ExtraMACs, 10), strconv.FormatFloat(r.ExtraMACsPercent, 'f', 2, 64)}
		}
		tflm = append(tflm, stripes...)
		runs := ""
		if r.TFLMRuns != nil {
			runs = strconv.FormatBool(*r.TFLMRuns)
		}
		tflm = append(tflm, runs, r.TFLMRefuses)
		w.Write(append([]string{r.Model, r.Path, r.Status, r.Error, strconv.Itoa(r.Steps), strconv.Itoa(r.Arenas),
			strconv.FormatInt(r.Bound, 10), strconv.FormatInt(r.Arena, 10), strconv.FormatFloat(r.OverBound, 'f', 2, 64),
			strconv.FormatInt(r.KernelScratch, 10), strconv.FormatFloat(r.Milliseconds, 'f', 1, 64), strconv.FormatBool(r.TimedOut)}, tflm...))
	}
	w.Flush()
	return buf.Bytes()
}

// JSON renders rows as summary.json: {"models": [...]}, indented.
func JSON(rows []Row) ([]byte, error) {
	if rows == nil {
		rows = []Row{}
	}
	b, err := json.MarshalIndent(struct {
		Models []Row `json:"models"`
	}{rows}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
