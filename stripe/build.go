package stripe

import (
	"encoding/binary"
	"fmt"

	"github.com/heliac/heliac/graph"
)

// builder appends a region's tensors, buffers and operators to out.
type builder struct {
	out *graph.Model
	s   graph.SubgraphIndex
	g   *subgraph // the original subgraph
	ops []graph.Op
}

func (b *builder) tensors() *[]graph.Tensor { return &b.out.Subgraphs[b.s].Tensors }

func (b *builder) tensor(t graph.TensorID) *graph.Tensor { return &(*b.tensors())[t] }

// activation appends a tensor computed at run time: type and quantization
// of like, shape [1, rows, W, C] of like, buffer 0.
func (b *builder) activation(name string, like graph.TensorID, rows int32) (graph.TensorID, error) {
	l := b.tensor(like)
	t := graph.Tensor{
		Name:         name,
		Type:         l.Type,
		Shape:        []int32{1, rows, l.Shape[2], l.Shape[3]},
		Quantization: copyQuant(l.Quantization),
	}
	size, err := graph.ByteSize(t.Type, t.Shape)
	if err != nil {
		return 0, fmt.Errorf("tensor %q: %v", name, err)
	}
	t.Size = size
	return b.add(t), nil
}

// constInt32 appends an INT32 constant with its own new buffer.
func (b *builder) constInt32(name string, shape []int32, v []int32) graph.TensorID {
	data := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(data[4*i:], uint32(x))
	}
	b.out.Buffers = append(b.out.Buffers, graph.Buffer{Data: data})
	return b.add(graph.Tensor{
		Name:   name,
		Type:   graph.Int32,
		Shape:  shape,
		Buffer: graph.BufferIndex(len(b.out.Buffers) - 1),
		Size:   int64(len(data)),
	})
}

func (b *builder) add(t graph.Tensor) graph.TensorID {
	*b.tensors() = append(*b.tensors(), t)
	return graph.TensorID(len(*b.tensors()) - 1)
}

func copyQuant(q *graph.Quantization) *graph.Quantization {
	if q == nil {
		return nil
	}
	c := *q
	c.Scale = append([]float32(nil), q.Scale...)
	c.ZeroPoint = append([]int64(nil), q.ZeroPoint...)
	return &c
}

// newOp appends an operator the rewrite adds (STRIDED_SLICE, PAD,
// CONCATENATION). Its version is 2 for INT8 tensors, 1 otherwise.
func (b *builder) newOp(code graph.Opcode, name string, typ graph.ElementType, opts *graph.Options, in []graph.TensorID, out graph.TensorID) {
	v := int32(1)
	if typ == graph.Int8 {
		v = 2
	}
	b.ops = append(b.ops, graph.Op{Code: code, CodeName: name, Version: v, Inputs: in, Outputs: []graph.TensorID{out}, Intermediates: []graph.TensorID{}, Options: opts})
}

// slice appends STRIDED_SLICE(from, rows c of like, from holding like's
// rows from n0 on) into a new tensor named name, with its constants
// name/begin, /end, /strides (docs/stripes.md, step 1), and returns the
// new tensor.
func (b *builder) slice(name string, like, from graph.TensorID, n0 int32, c span) (graph.TensorID, error) {
	l := b.g.tensor(like)
	begin := b.constInt32(name+"/begin", []int32{4}, []int32{0, c.a - n0, 0, 0})
	end := b.constInt32(name+"/end", []int32{4}, []int32{1, c.b - n0, l.Shape[2], l.Shape[3]})
	strides := b.constInt32(name+"/strides", []int32{4}, []int32{1, 1, 1, 1})
	sl, err := b.activation(name, like, c.b-c.a)
	if err != nil {
		return 0, err
	}
	b.newOp(opStridedSlice, "STRIDED_SLICE", l.Type, stridedSliceOptions(), []graph.TensorID{from, begin, end, strides}, sl)
	return sl, nil
}

// region builds the operators of every stripe and the concatenation (with
// more than 10 stripes, each group's concatenation after its last stripe,
// then that of the groups), and fills reg's MACs and ExtraMACs. With
// cached halos (reg.Cached()) each copy computes only its fresh rows; a
// CONCATENATION puts the cache taken from the stripe before in front of
// them, and a STRIDED_SLICE takes the next stripe's cache from the
// stripe's tensor (docs/stripes.md, "Halo rows").
func (b *builder) region(reg *region) ([]graph.Op, error) {
	g := b.g
	reg.MACs = 0 // what the caller gave is not counted again
	for _, i := range reg.Ops {
		reg.MACs += OpMACs(g.m, g.s, g.op(i))
	}
	plan, err := reg.stripes()
	if err != nil {
		return nil, err
	}
	var copies int64
	var ys []graph.TensorID
	// caches: each intermediate's cache for the next stripe, made in
	// the stripe before.
	caches := map[graph.TensorID]graph.TensorID{}
	yt := g.tensor(reg.Output)
	// With more than 10 stripes, each group's CONCATENATION follows its
	// last stripe's operators, and the last CONCATENATION joins the
	// groups (docs/stripes.md, "More than 10 stripes: groups").
	grp := groups(len(plan))
	var joined []graph.TensorID // the group tensors made so far
	for j, sr := range plan {
		have := map[graph.TensorID]graph.TensorID{reg.Input: reg.Input}
		first := map[graph.TensorID]int32{reg.Input: 0}
		for _, i := range reg.Ops {
			op := g.op(i)
			o := op.Outputs[0]
			c := *op
			c.Inputs = append([]graph.TensorID(nil), op.Inputs...)
			for a, t := range op.Inputs {
				if t == graph.NoTensor || g.constant(t) {
					continue
				}
				base := fmt.Sprintf("%s/stripe%d", g.tensor(t).Name, j)
				cur := have[t]
				n0 := first[t]
				n1 := n0 + b.tensor(cur).Shape[1]
				u := sr.uses[[2]int{i, a}]
				ti := g.tensor(t)
				if u.c != (span{n0, n1}) {
					if cur, err = b.slice(base+"/slice", t, cur, n0, u.c); err != nil {
						return nil, err
					}
				}
				if kindOf(op.Code) == convLike {
					w := reg.win[i][1]
					top, bottom := u.c.a-u.u.a, u.u.b-u.c.b
					left, right := w.pad, w.trailing(ti.Shape[2], g.tensor(o).Shape[2])
					if top != 0 || bottom != 0 || left != 0 || right != 0 {
						name := base + "/pad"
						p := b.constInt32(name+"/paddings", []int32{4, 2}, []int32{0, 0, top, bottom, left, right, 0, 0})
						l := b.tensor(cur)
						pt := graph.Tensor{
							Name:         name,
							Type:         l.Type,
							Shape:        []int32{1, l.Shape[1] + top + bottom, l.Shape[2] + left + right, l.Shape[3]},
							Quantization: copyQuant(l.Quantization),
						}
						size, err := graph.ByteSize(pt.Type, pt.Shape)
						if err != nil {
							return nil, fmt.Errorf("tensor %q: %v", name, err)
						}
						pt.Size = size
						padded := b.add(pt)
						b.newOp(opPad, "PAD", ti.Type, padOptions(), []graph.TensorID{cur, p}, padded)
						cur = padded
					}
				}
				c.Inputs[a] = cur
			}
			q := sr.fresh[o]
			switch kindOf(op.Code) {
			case convLike, pool:
				w := *op.Window
				w.Padding = graph.PaddingValid
				c.Window = &w
				c.Options = withPadding(op.Options, graph.PaddingValid)
			case pad:
				p := reg.pad[i]
				p[1][0], p[1][1] = reg.stripePad(i, q)
				c.Inputs[1] = b.constInt32(fmt.Sprintf("%s/stripe%d/paddings", g.tensor(o).Name, j), []int32{4, 2},
					[]int32{p[0][0], p[0][1], p[1][0], p[1][1], p[2][0], p[2][1], p[3][0], p[3][1]})
			}
			name := fmt.Sprintf("%s/stripe%d", g.tensor(o).Name, j)
			_, cached := sr.cache[o]
			copyName := name
			if cached {
				copyName = name + "/new"
			}
			ot, err := b.activation(copyName, o, q.b-q.a)
			if err != nil {
				return nil, err
			}
			c.Outputs = []graph.TensorID{ot}
			b.ops = append(b.ops, c)
			copies += OpMACs(b.out, b.s, &b.ops[len(b.ops)-1])
			need := sr.need[o]
			if cached {
				// The rows of the stripe before, then the fresh ones.
				held, err := b.activation(name, o, need.b-need.a)
				if err != nil {
					return nil, err
				}
				b.newOp(opConcatenation, "CONCATENATION", g.tensor(o).Type, concatenationOptions(1), []graph.TensorID{caches[o], ot}, held)
				ot = held
			}
			have[o], first[o] = ot, need.a
			if o == reg.Output {
				ys = append(ys, ot)
				continue
			}
			if j+1 < len(plan) {
				if next, ok := plan[j+1].cache[o]; ok {
					if next == need {
						caches[o] = ot
					} else if caches[o], err = b.slice(fmt.Sprintf("%s/stripe%d/cache", g.tensor(o).Name, j+1), o, ot, need.a, next); err != nil {
						return nil, err
					}
				}
			}
		}
		if n := len(joined); n < len(grp) && j == grp[n][1]-1 {
			j0, j1 := grp[n][0], grp[n][1]
			gt, err := b.activation(fmt.Sprintf("%s/group%d", yt.Name, n), reg.Output, reg.Rows[j1-1][1]-reg.Rows[j0][0])
			if err != nil {
				return nil, err
			}
			b.newOp(opConcatenation, "CONCATENATION", yt.Type, concatenationOptions(1), append([]graph.TensorID(nil), ys[j0:j1]...), gt)
			joined = append(joined, gt)
		}
	}
	if grp != nil {
		ys = joined
	}
	b.newOp(opConcatenation, "CONCATENATION", yt.Type, concatenationOptions(1), ys, reg.Output)
	reg.ExtraMACs = copies - reg.MACs
	return b.ops, nil
}
