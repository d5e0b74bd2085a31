package driver

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/heliac/heliac/kernels"
	"github.com/heliac/heliac/liveness"
)

func TestZZTrace(t *testing.T) {
	name := os.Getenv("ZZ_MODEL")
	if name == "" {
		t.Skip()
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	lib, _ := kernels.Lookup(kernels.TFLMReference)
	cfg := Config{Liveness: liveness.Options{Kernels: lib, ExactOverlap: true}, Kernels: lib, Patches: PatchesAuto}
	if os.Getenv("ZZ_CAP") != "" {
		fmt.Sscan(os.Getenv("ZZ_CAP"), &cfg.PatchMACs)
	}
	if os.Getenv("ZZ_QUIET") == "" {
		tracePatches = func(f string, a ...any) { fmt.Printf(f+"\n", a...) }
	}
	out, err := Compile(context.Background(), data, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := out.Patches
	fmt.Printf("RESULT head %d -> %d, arena %d -> %d, tried %d, extra %d\n", p.HeadBefore, p.HeadAfter, p.ArenaBefore, p.ArenaAfter, p.Tried, p.ExtraMACs)
	for _, r := range p.Regions {
		fmt.Printf("  region %d -> %d ops %v k %d halo %s rows %v\n", r.Input, r.Output, r.Ops, r.K(), r.HaloKind(), r.Rows)
	}
}
