package graph_test

import (
	"testing"

	"github.com/heliac/heliac/graph"
	"github.com/stretchr/testify/assert"
)

func TestResolved(t *testing.T) {
	conv := func() *graph.Options {
		return &graph.Options{Table: "Conv2DOptions", Fields: []graph.OptionField{
			{Name: "padding", Kind: graph.OptionInt, Present: true, Int: int64(graph.PaddingSame)},
			{Name: "stride_w", Kind: graph.OptionInt, Present: true, Int: 1},
			{Name: "stride_h", Kind: graph.OptionInt, Present: true, Int: 1},
			{Name: "dilation_w_factor", Kind: graph.OptionInt, Int: 1},
			{Name: "dilation_h_factor", Kind: graph.OptionInt, Int: 1},
		}}
	}
	handle := func() *graph.Options {
		return &graph.Options{Table: "VarHandleOptions", Fields: []graph.OptionField{
			{Name: "container", Kind: graph.OptionString},
			{Name: "shared_name", Kind: graph.OptionString, Present: true, Str: "v"},
		}}
	}
	win := graph.Window{Padding: graph.PaddingSame, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}
	tests := []struct {
		name string
		op   graph.Op
		same bool // Resolved returns Options itself
		want map[string]int64
		strs map[string]string
	}{
		{name: "agreeing window", op: graph.Op{Code: graph.Conv2D, Window: &win, Options: conv()}, same: true},
		{name: "window changed", op: graph.Op{Code: graph.Conv2D, Options: conv(),
			Window: &graph.Window{Padding: graph.PaddingValid, StrideW: 2, StrideH: 1, DilationW: 1, DilationH: 3}},
			want: map[string]int64{"padding": int64(graph.PaddingValid), "stride_w": 2, "stride_h": 1, "dilation_h_factor": 3}},
		{name: "called changed", op: graph.Op{Code: graph.CallOnce, Called: []graph.SubgraphIndex{2},
			Options: &graph.Options{Table: "CallOnceOptions", Fields: []graph.OptionField{{Name: "init_subgraph_index", Kind: graph.OptionInt, Present: true, Int: 1}}}},
			want: map[string]int64{"init_subgraph_index": 2}},
		{name: "resource renamed", op: graph.Op{Code: graph.VarHandle, Options: handle(),
			Resource: &graph.ResourceName{SharedName: "w", Container: "c", HasContainer: true}},
			strs: map[string]string{"shared_name": "w", "container": "c"}},
		{name: "agreeing resource", op: graph.Op{Code: graph.VarHandle, Options: handle(),
			Resource: &graph.ResourceName{SharedName: "v"}}, same: true},
		{name: "no options", op: graph.Op{Code: graph.Conv2D, Window: &win}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := tt.op.Options
			var before []graph.OptionField
			if orig != nil {
				before = append(before, orig.Fields...)
			}
			got := tt.op.Resolved()
			if orig == nil {
				assert.Nil(t, got)
				return
			}
			assert.Equal(t, before, orig.Fields, "Resolved leaves Options as it was")
			if tt.same {
				assert.Same(t, orig, got)
				return
			}
			assert.NotSame(t, orig, got)
			for k, v := range tt.want {
				assert.Equal(t, v, got.Int(k), k)
				assert.True(t, got.Field(k).Present, k)
			}
			for k, v := range tt.strs {
				assert.Equal(t, v, got.Str(k), k)
				assert.True(t, got.Field(k).Present, k)
			}
		})
	}
}
