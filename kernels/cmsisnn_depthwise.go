package kernels

import "github.com/heliac/heliac/graph"

// DEPTHWISE_CONV_2D under TFLM's CMSIS-NN kernels, on each code path.
//
// cmsis_nn/depthwise_conv.cc Eval (lines 372-434) runs FLOAT32 through
// the reference kernel (cmsisContracts' referenceWhen), INT8 with INT8
// filters through arm_depthwise_conv_wrapper_s8 (EvalQuantizedPerChannel,
// 292-299), INT8 with INT4 filters through arm_depthwise_conv_wrapper_s4
// (EvalQuantizedPerChannelInt4, 329-336) and INT16 through
// arm_depthwise_conv_s16 (EvalQuantizedPerChannel16x8, 362-369; neither
// CMSIS-NN's s16 wrapper nor its fast_s16 kernel is reachable).
// PopulateDwConvParams (203-264) passes the operator's depth_multiplier
// as ch_mult and TFLM's padding (padding.h: half the total, rounded
// down). The wrappers then choose a function by shape and code path
// (dwDispatch; MVE builds define ARM_MATH_DSP too, and the "opt" kernels
// test ARM_MATH_MVEI inside ARM_MATH_DSP), and each function's loops
// decide where the input may lie (dwWindow):
//
//	function                        path      order                                window
//	generic s8 and s16, s4 one      all       output elements in flat NHWC order,  windowPlacement,
//	  at a time, s8 opt without               each after its window's reads        elementOrder
//	  DSP (the generic kernel)
//	3x3 (pad <= 1), mult_4, s4 two  3x3 not   a few channels of one pixel at a     dwChannelGroups
//	  at a time                     on MVE    time, after all their windows' reads
//	s8 opt, s4 opt                  DSP; s4   a pixel's window copied to scratch,  dwPixelGroups(1)
//	                                also C    then its channels written
//	s8 opt, s4 opt, <= 124 chan.    MVE       four pixels' windows copied, then    dwPixelGroups(4)
//	                                          their channels written
//	s8 opt, s4 opt, > 124 chan.     MVE       blocks of 124 channels, each a sweep dwOptBlocks: one
//	                                          of the above                         point
//	one input channel, more         MVE       a convolution with the filter        dwConvRows (1x1),
//	  output channels                         transposed: 1x1 a matrix product     dwConvIm2colOr1xN
//	                                          reading its rows again per channel;
//	                                          else im2col of four pixels
//
// Every function CMSIS-NN reaches from these wrappers on a path has a
// window: none passes the input or output through a restrict-qualified
// pointer (OPTIONAL_RESTRICT_KEYWORD is empty unless a build defines it,
// Include/arm_nnsupportfunctions.h 89-93, and TFLM's does not;
// arm_memcpy_s8's __RESTRICT, 1741, qualifies a copy from the input into
// scratch), and no copy overlaps: every copy goes from the input into
// kernel scratch. Only arm_convolve_1_x_n_s8's failures (padding that
// does not add up, ARM_CMSIS_NN_FAILURE, on which TFLM's DCHECK aborts)
// have no contract.

// dwCMSISNN prefixes the CMSIS-NN paths the rules cite (relative to its
// root, at the commit TFLM pins; see CMSISNN).
const dwCMSISNN = "CMSIS-NN@4ab83cc: "

// CMSIS-NN's source folders.
const (
	dwConvFuncs   = "Source/ConvolutionFunctions/"
	dwSupportFunc = "Source/NNSupportFunctions/"
)

// dwBlockMVE is CH_IN_BLOCK_MVE and S4_CH_IN_BLOCK_MVE
// (Include/arm_nnsupportfunctions.h 65, 70): the channels the MVE "opt"
// kernels take at a time.
const dwBlockMVE = 124

// dwKernel is the CMSIS-NN function TFLM's cmsis_nn DEPTHWISE_CONV_2D runs
// an operator with on one code path.
type dwKernel uint8

// The functions.
const (
	dwNone           dwKernel = iota // not a CMSIS-NN depthwise convolution here (FLOAT32, other types)
	dw3x3                            // arm_depthwise_conv_3x3_s8 (no MVE)
	dwOptGeneric                     // arm_depthwise_conv_s8_opt without DSP: arm_depthwise_conv_s8 (generic)
	dwMult4                          // depthwise_conv_s8_mult_4
	dwGeneric                        // depthwise_conv_s8_generic
	dwS4Generic                      // depthwise_conv_s4_generic
	dwS16                            // depthwise_conv_s16_generic_s16
	dwOptDSP                         // arm_depthwise_conv_s8_opt, DSP code
	dwS4OptIm2col                    // arm_depthwise_conv_s4_opt without MVE
	dwOptMVE                         // arm_depthwise_conv_s8_opt, MVE code
	dwS4OptMVE                       // arm_depthwise_conv_s4_opt, MVE code
	dwConv1x1                        // MVE, one input channel: arm_convolve_1x1_s8_fast
	dwConv1x1Strided                 // MVE, one input channel: arm_convolve_1x1_s8
	dwConv1xN                        // MVE, one input channel: arm_convolve_1_x_n_s8
	dwConvIm2col                     // MVE, one input channel: arm_convolve_s8
)

// dwGeom is a depthwise convolution as CMSIS-NN's functions see it:
// element types, NHWC shapes, the filter's height and width, strides,
// dilations, TFLM's padding and the depth multiplier, with the element
// size e (bytes) and the reference kernels' Lo (refLo).
type dwGeom struct {
	act, filter                        graph.ElementType
	n, inH, inW, inC, outH, outW, outC int64
	fh, fw, sh, sw, dh, dw, ph, pw     int64
	mult, e                            int64
	inSize, outSize, refLo             int64
}

// depthwiseGeom reads op's geometry for dwDispatch, checking only what
// it reads (operands and options there, strides and dilations positive:
// WindowPadding divides by them); windowPlacement checks the rest
// (dwPlace).
func depthwiseGeom(c placeCtx) (dwGeom, bool) {
	w := c.op.Window
	if c.op.Code != graph.DepthwiseConv2D || w == nil || len(c.in.Shape) != 4 || len(c.out.Shape) != 4 ||
		len(c.op.Inputs) < 2 || c.op.Inputs[1] < 0 || int(c.op.Inputs[1]) >= len(c.sg.Tensors) ||
		w.StrideH < 1 || w.StrideW < 1 || w.DilationH < 1 || w.DilationW < 1 {
		return dwGeom{}, false
	}
	f := &c.sg.Tensors[c.op.Inputs[1]]
	if len(f.Shape) != 4 {
		return dwGeom{}, false
	}
	g := dwGeom{act: c.in.Type, filter: f.Type,
		n: dim(c.in, 0), inH: dim(c.in, 1), inW: dim(c.in, 2), inC: dim(c.in, 3),
		outH: dim(c.out, 1), outW: dim(c.out, 2), outC: dim(c.out, 3),
		fh: dim(f, 1), fw: dim(f, 2), sh: int64(w.StrideH), sw: int64(w.StrideW),
		dh: int64(w.DilationH), dw: int64(w.DilationW), mult: int64(w.DepthMultiplier),
		e: int64(c.in.Type.Bits() / 8), inSize: c.in.Size, outSize: c.out.Size}
	g.ph, _ = WindowPadding(w.Padding, g.inH, g.fh, g.sh, g.dh, g.outH)
	g.pw, _ = WindowPadding(w.Padding, g.inW, g.fw, g.sw, g.dw, g.outW)
	return g, true
}

// dwPlace is the window of function k running the operator of c (g its
// geometry): none where the reference kernels' rule does not apply
// (windowPlacement in element order: TFLM's output shape, one element
// type of INT8, INT16 or FLOAT32, a filter type TFLM takes, a consistent
// depth multiplier), whose Lo it records as g.refLo.
func dwPlace(c placeCtx, g dwGeom, k dwKernel) (int64, int64, bool) {
	lo, _, ok := windowPlacement(c.m, c.sg, c.op, c.in, c.out, elementOrder)
	if !ok {
		return 0, 0, false
	}
	g.refLo = lo
	return dwWindow(g, k)
}

// dwDispatch returns the function TFLM's cmsis_nn kernel runs g with on
// path isa: depthwise_conv.cc Eval by type, then
// arm_depthwise_conv_wrapper_s8.c (one input channel on MVE 109-124, "opt"
// for a multiplier of 1, one batch and no dilation 126-127, the 3x3
// kernel without MVE 129-146), arm_depthwise_conv_s8_opt.c (without DSP,
// 405-418: arm_depthwise_conv_s8), arm_depthwise_conv_s8.c (mult_4 for a
// multiplier that is a multiple of 4, one batch, no dilation, 291-317),
// arm_convolve_wrapper_s8.c for the convolution (1x1 63-91, 1xN 93-106,
// else arm_convolve_s8; Include/arm_nnsupportfunctions.h 125-159),
// arm_depthwise_conv_wrapper_s4.c (61-91).
func dwDispatch(g dwGeom, isa ISA) dwKernel {
	opt := g.mult == 1 && g.n == 1 && g.dw == 1 && g.dh == 1
	switch {
	case g.act == graph.Int16 && g.filter == graph.Int8:
		return dwS16
	case g.act != graph.Int8:
		return dwNone
	case g.filter == graph.Int4:
		switch {
		case !opt:
			return dwS4Generic
		case isa == MVE:
			return dwS4OptMVE
		}
		return dwS4OptIm2col
	case g.filter != graph.Int8:
		return dwNone
	}
	// Under GCC the threshold is 1 output channel (arm_nnsupportfunctions.h 83-87).
	if isa == MVE && g.inC == 1 && g.outC > 1 {
		switch {
		case g.ph == 0 && g.pw == 0 && g.fh == 1 && g.fw == 1 && g.dh == 1 && g.dw == 1:
			if g.sh == 1 && g.sw == 1 {
				return dwConv1x1
			}
			return dwConv1x1Strided
		case g.inH == 1 && g.dw == 1 && g.fh == 1 && g.sw%4 == 0:
			return dwConv1xN
		}
		return dwConvIm2col
	}
	if opt {
		switch {
		case isa != MVE && g.fh == 3 && g.fw == 3 && g.ph <= 1 && g.pw <= 1:
			return dw3x3
		case isa == MVE:
			return dwOptMVE
		case isa == DSP:
			return dwOptDSP
		}
		return dwOptGeneric
	}
	if g.mult%4 == 0 && g.n == 1 && g.dw == 1 && g.dh == 1 {
		return dwMult4
	}
	return dwGeneric
}

// cmsisDepthwiseContracts registers, on l, the in-place contracts of
// DEPTHWISE_CONV_2D where TFLM's cmsis_nn kernel runs CMSIS-NN's own
// functions on l.isa's code path: one rule per function (or family of
// functions with one order), each applying where dwDispatch picks one of
// them, placed by dwPlace. Every function the wrappers reach on the path
// has a rule; a rule whose functions a path never runs is not registered
// there.
func cmsisDepthwiseContracts(l *Library) {
	rule := func(source string, kernels ...dwKernel) {
		l.addRule(Contract{Op: graph.DepthwiseConv2D, Name: "DEPTHWISE_CONV_2D", Input: 0, Output: 0, Overlap: Sweep,
			Source: tflmCommit + ": " + cmsisDir + "depthwise_conv.cc Eval (INT8 with INT8 filters: " +
				"arm_depthwise_conv_wrapper_s8, lines 407-411 and 292-299; with INT4 filters: arm_depthwise_conv_wrapper_s4, " +
				"412-416 and 329-336; INT16: arm_depthwise_conv_s16, 424-427 and 362-369; ch_mult and padding from " +
				"PopulateDwConvParams 203-264); " + dwCMSISNN + source},
			func(c placeCtx) (int64, int64, bool) {
				g, ok := depthwiseGeom(c)
				if !ok {
					return 0, 0, false
				}
				k := dwDispatch(g, c.isa)
				for _, want := range kernels {
					if k == want {
						return dwPlace(c, g, k)
					}
				}
				return 0, 0, false
			})
	}
	// Output elements in flat NHWC order, each written after every read
	// of its window, or a few channels of one pixel at a time after the
	// reads of all their windows (dwChannelGroups).
	if l.isa != MVE {
		rule(dwConvFuncs+"arm_depthwise_conv_wrapper_s8.c arm_depthwise_conv_wrapper_s8 (3x3 kernel without MVE, 129-146); "+
			dwConvFuncs+"arm_depthwise_conv_3x3_s8.c arm_depthwise_conv_3x3_s8 (pixels in order, 95-97; four channels' "+
			"windows read at 117-215, DSP or C, then written at 232-235; leftover channels one at a time, 239-272)",
			dw3x3)
	}
	rule(dwConvFuncs+"arm_depthwise_conv_wrapper_s8.c arm_depthwise_conv_wrapper_s8 (arm_depthwise_conv_s8, 161-174); "+
		dwConvFuncs+"arm_depthwise_conv_s8_opt.c arm_depthwise_conv_s8_opt (without DSP: arm_depthwise_conv_s8, 405-418); "+
		dwConvFuncs+"arm_depthwise_conv_s8.c arm_depthwise_conv_s8 (291-346): depthwise_conv_s8_mult_4 (a multiplier "+
		"that is a multiple of 4, one batch, no dilation; pixels in order, 76-78; per input channel, four outputs' "+
		"window read at 108, then written at 124 with MVE or 142-145) and depthwise_conv_s8_generic (batch, pixel, "+
		"output channel, 186-198; window read at 246, written at 256)",
		dwOptGeneric, dwMult4, dwGeneric)
	rule(dwConvFuncs+"arm_depthwise_conv_wrapper_s4.c arm_depthwise_conv_wrapper_s4 (arm_depthwise_conv_s4, 76-91); "+
		dwConvFuncs+"arm_depthwise_conv_s4.c depthwise_conv_s4_generic (batch, pixel, then, with an even channel count, "+
		"two input channels at multiplier 1 (92-172) or two outputs of one at an even multiplier (270-359), one at a "+
		"time otherwise (177-265, 369-480): windows read at 150-151, 248, 335-336, 453, written at 165-171, 263, 350-357, 473)",
		dwS4Generic)
	rule(dwConvFuncs+"arm_depthwise_conv_s16.c arm_depthwise_conv_s16 (depthwise_conv_s16_generic_s16, 262-284; "+
		"batch, pixel, output channel, 158-170; window read at 220, written at 228; depthwise_conv_s16_mult_4_s16 is unused)",
		dwS16)
	// One pixel at a time: its window (every channel) copied to scratch,
	// then its channels computed from scratch and written.
	if l.isa != MVE {
		rule(dwConvFuncs+"arm_depthwise_conv_s8_opt.c arm_depthwise_conv_s8_opt (DSP, 210-403: a pixel's window "+
			"copied by arm_q7_to_q15_with_offset at 227-266, then its channels written from scratch, 268-398); "+
			dwConvFuncs+"arm_depthwise_conv_s4_opt.c arm_depthwise_conv_s4_opt (without MVE, DSP or C, 251-682: "+
			"window copied at 271-308, channels written at 310-679)",
			dwOptDSP, dwS4OptIm2col)
	}
	if l.isa != MVE {
		return
	}
	rule(dwConvFuncs+"arm_depthwise_conv_s8_opt.c arm_depthwise_conv_s8_opt (MVE, 96-209: blocks of "+
		"CH_IN_BLOCK_MVE channels, 103-108; in each, four pixels' windows copied by arm_memcpy_s8 at 113-135, then "+
		"written by "+dwSupportFunc+"arm_nn_depthwise_conv_nt_t_s8.c from scratch, 136-157, the last one to three "+
		"after the sweep, 160-204); "+dwConvFuncs+"arm_depthwise_conv_s4_opt.c arm_depthwise_conv_s4_opt (MVE, 97-250, "+
		"the same with S4_CH_IN_BLOCK_MVE); Include/arm_nnsupportfunctions.h 65 and 70 (124)",
		dwOptMVE, dwS4OptMVE)
	rule(dwConvFuncs+"arm_depthwise_conv_wrapper_s8.c arm_depthwise_conv_to_conv_s8 (one input channel and more "+
		"than CONVERT_DW_CONV_WITH_ONE_INPUT_CH_AND_OUTPUT_CH_ABOVE_THRESHOLD, 1 under GCC, output channels: "+
		"109-124, 44-87: the filter transposed into scratch, then arm_convolve_wrapper_s8); "+
		dwConvFuncs+"arm_convolve_wrapper_s8.c (1x1 and unit strides: arm_convolve_1x1_s8_fast, 63-77, whose GCC "+
		"build is one matrix product over every pixel, arm_convolve_1x1_s8_fast.c 176-190; 1x1: arm_convolve_1x1_s8 "+
		"(78-91), one product per output row, arm_convolve_1x1_s8.c 80-108); "+
		dwSupportFunc+"arm_nn_mat_mult_nt_t_s8.c arm_nn_mat_mult_nt_t_s8 (MVE, 65-223: four input rows read again "+
		"for each output channel, 67-128, whose four bytes are written at 144-146; a leftover row read for each "+
		"channel, written four channels at a time, 153-221)",
		dwConv1x1, dwConv1x1Strided)
	rule(dwConvFuncs+"arm_depthwise_conv_wrapper_s8.c arm_depthwise_conv_to_conv_s8 (109-124, 44-87); "+
		dwConvFuncs+"arm_convolve_wrapper_s8.c (1xN: arm_convolve_1_x_n_s8, 93-106, else arm_convolve_s8, "+
		"107-120); "+dwConvFuncs+"arm_convolve_1_x_n_s8.c arm_convolve_1_x_n_s8 (MVE, 69-212: the left padded outputs "+
		"from a copy of the input's first filter width, 120-144, the unpadded ones by arm_nn_mat_mult_nt_t_s8 from the "+
		"input, 146-175, the right padded ones from a copy, 177-208; padding that does not add up fails, 83-86, or "+
		"runs arm_convolve_s8, 99-113); "+dwConvFuncs+"arm_convolve_s8.c arm_convolve_s8 (MVE: per batch, four "+
		"pixels' windows copied by arm_memcpy_s8, 187-209, then written by arm_nn_mat_mult_nt_t_s8 from scratch, "+
		"212-238; the last one to three at 300-322)",
		dwConv1xN, dwConvIm2col)
}

// dwWindow is the window of function k running g.
func dwWindow(g dwGeom, k dwKernel) (int64, int64, bool) {
	switch k {
	case dwOptGeneric, dwGeneric, dwS16:
		return g.refLo, g.outSize, true
	case dwS4Generic:
		if g.inC%2 == 0 && (g.mult == 1 || g.mult%2 == 0) {
			return dwChannelGroups(g, func(int64) int64 { return 2 })
		}
		return g.refLo, g.outSize, true
	case dw3x3:
		return dwChannelGroups(g, func(k int64) int64 {
			if k+4 <= g.outC {
				return 4
			}
			return 1
		})
	case dwMult4:
		return dwChannelGroups(g, func(int64) int64 { return 4 })
	case dwOptDSP, dwS4OptIm2col:
		return dwPixelGroups(g, 1)
	case dwOptMVE, dwS4OptMVE:
		return dwOptBlocks(g)
	case dwConv1x1, dwConv1x1Strided:
		return dwConvRows(g)
	case dwConv1xN, dwConvIm2col:
		return dwConvIm2colOr1xN(g)
	}
	return 0, 0, false
}
