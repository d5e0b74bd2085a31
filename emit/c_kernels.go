package emit

import "github.com/heliac/heliac/plan"

// kernelGuard writes the preprocessor checks that refuse to compile the
// module in a build whose kernels are not those the plan's in-place
// writes were allowed for (plan.Plan.Kernels, KernelsPath): an output
// written over its input where one kernel library allows it may compute
// other outputs under another. TFLM's CMSIS-NN build defines CMSIS_NN
// (tensorflow/lite/micro/tools/make/ext_libs/cmsis_nn.inc, -DCMSIS_NN), and
// CMSIS-NN picks its code by the compiler's target macros
// (Include/arm_nn_math_types.h: ARM_MATH_MVEI from __ARM_FEATURE_MVE,
// ARM_MATH_DSP from __ARM_FEATURE_DSP), so the checks read the same
// macros. A plan for any library on every path checks nothing.
func (g *cgen) kernelGuard(w *cwriter) {
	w.WriteString(kernelGuardText(g.prefix+".h", g.p.Kernels, g.p.KernelsPath))
}

// kernelGuardText is kernelGuard's text for header file, a plan made for
// kernel library lib on code path path (plan.json "kernels",
// "kernels_path"): "" when the plan holds for every library and path.
func kernelGuardText(file, lib, path string) string {
	if lib == "" || (lib == kernelsAny && path == "") {
		return ""
	}
	w := &cwriter{}
	w.f("\n/* Outputs are written over dying inputs where the kernels the plan was made\n" +
		" * for allow it (plan.json \"kernels\", \"kernels_path\"); with other kernels the\n" +
		" * model may compute other outputs, so other kernels do not compile. */\n")
	switch lib {
	case kernelsReference:
		w.f("#if defined(CMSIS_NN)\n#error \"%s: planned for TFLM's reference kernels, but this build defines CMSIS_NN "+
			"(TFLM's CMSIS-NN kernels): run heliac without --kernels (a plan for every kernel library) or with --kernels cmsis-nn\"\n#endif\n", file)
		return w.String()
	case kernelsCMSISNN:
		w.f("#if !defined(CMSIS_NN)\n#error \"%s: planned for TFLM's CMSIS-NN kernels, but this build does not define CMSIS_NN "+
			"(TFLM's reference kernels): run heliac without --kernels (a plan for every kernel library) or with --kernels tflm-reference\"\n#endif\n", file)
	}
	// The code path: CMSIS-NN's kernels, whichever library the plan also
	// holds for, are those of the CPU the module is compiled for.
	var wrong, runs string
	switch path {
	case "mve":
		wrong, runs = "!"+cmsisMVE, "its DSP or portable code"
	case "dsp":
		wrong, runs = "!"+cmsisDSP+" || "+cmsisMVE, "its MVE or portable code"
	case "portable":
		wrong, runs = cmsisDSP+" || "+cmsisMVE, "its DSP or MVE code"
	default:
		return w.String()
	}
	w.f("#if defined(CMSIS_NN) && (%s)\n#error \"%s: planned for CMSIS-NN's %s code, but CMSIS-NN runs %s "+
		"for this CPU: run heliac with --cpu naming this CPU (generic for a host)\"\n#endif\n", wrong, file, path, runs)
	return w.String()
}

// CMSIS-NN picks its code path by these macros, as
// Include/arm_nn_math_types.h @4ab83cc (lines 55-66 and 88-98) defines
// them: its MVE (Helium) code where ARM_MATH_MVEI is defined, which that
// header defines when __ARM_FEATURE_MVE & 1 (MVE integer) or
// ARM_MATH_HELIUM; else its DSP code where ARM_MATH_DSP is, defined when
// __ARM_FEATURE_DSP == 1; else its portable C. A build may define
// ARM_MATH_* itself. The module's checks read the same macros (the
// compiler's, or the build's own).
const (
	cmsisMVE = "(defined(ARM_MATH_MVEI) || defined(ARM_MATH_HELIUM) || (defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)))"
	cmsisDSP = "(defined(ARM_MATH_DSP) || (defined(__ARM_FEATURE_DSP) && (__ARM_FEATURE_DSP == 1)))"
)

// The kernel libraries' names, as plan.json spells them (package kernels).
const (
	kernelsAny       = "any"
	kernelsReference = "tflm-reference"
	kernelsCMSISNN   = "cmsis-nn"
)

// kernelsText names the plan's kernels and code path: "any (mve)".
func kernelsText(p *plan.Plan) string {
	if p.KernelsPath != "" {
		return p.Kernels + " (" + p.KernelsPath + ")"
	}
	return p.Kernels
}

// anyBuilds says which kernel builds a plan for any library holds for,
// on the code path path ("" for every path).
func anyBuilds(path string) string {
	if path == "" {
		return "TFLM's reference kernels and its CMSIS-NN kernels on every code path (portable C, DSP, MVE)"
	}
	return "TFLM's reference kernels and its CMSIS-NN kernels' " + path + " code"
}
