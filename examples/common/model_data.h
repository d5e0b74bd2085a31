/* The original model, linked in by model_data.S, for the harness's TFLM
 * backend (HELIAC_TFLITE_HEADER; HELIAC_PREFIX=model names it model_tflite). */
#ifndef MODEL_DATA_H
#define MODEL_DATA_H

#ifdef __cplusplus
extern "C" {
#endif

extern const unsigned char model_tflite[];

#ifdef __cplusplus
}
#endif

#endif
