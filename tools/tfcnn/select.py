"""Writes testdata/tfcnn/tfcnn.csv, a gpusim measurement set, from the project's calibration
file of two consumer GPUs' tf_cnn_benchmarks logs (lambda_2080ti_3090.csv: the RTX 2080 Ti
and RTX 3090 rows of github.com/lambdal/lambda-tensorflow-benchmark's raw logs).

    python3 tools/tfcnn/select.py PATH/TO/lambda_2080ti_3090.csv > testdata/tfcnn/tfcnn.csv

Kept: throughput rows on synthetic data of models in gpusim's zoo. Each row becomes the
scenario the logs describe (their notes): tf_cnn_benchmarks' SGD, variable_update=replicated
with NCCL all-reduce (one process, every GPU a replica: MirroredStrategy), synthetic images
made on the GPU (input_on_device), --use_fp16 as mixed_float16, on the box the log folder
names; under --use_fp16 its default --compact_gradient_transfer all-reduces the gradients in
float16 (strategy.compression: fp16). tf_cnn_benchmarks builds a TF1-style graph under every release and its --xla is
auto-clustering (global_jit_level ON_1), which a TF 2 row gets through TF_XLA_FLAGS.
The logs' "AllReduce: nccl" is --all_reduce_spec=nccl with the default --gradient_repacking=0
and --agg_small_grads_max_bytes=0: one NCCL all-reduce per gradient, no packs
(strategy.num_packs: 0); the script's default --gpu_thread_mode=gpu_private gives each GPU
its own launch threads (TF_GPU_THREAD_MODE).
"""
import csv
import sys

MODELS = {"resnet50": "resnet50", "resnet152": "resnet152", "inception3": "inceptionv3", "vgg16": "vgg16"}
GPUS = {"RTX 2080 Ti": "rtx2080ti", "RTX 3090": "rtx3090"}
# tf_cnn_benchmarks' ResNets have no convolution biases (use_bias=not use_batch_norm); the
# zoo's Keras ResNets keep theirs. AlexNet and Inception-v4 are not in the zoo.
MODEL_NOTE = {"resnet50": "Keras ResNet-50 v1 for tf_cnn_benchmarks' (which has no conv biases)",
              "resnet152": "Keras ResNet-152 v1 for tf_cnn_benchmarks' (which has no conv biases)"}


def host(system):
    if system.startswith("Gold_6230-"):
        return "xeon-gold-6230-8x-nvlink" if "_NVLink" in system else "xeon-gold-6230-8x"
    if system.startswith("3970X-"):
        return "threadripper-3970x-3x"
    if system.startswith("7662-"):
        return "epyc-7662-8x"
    raise SystemExit("unknown system " + system)


def env(auto_jit):
    kv = ["TF_GPU_THREAD_MODE: gpu_private"]
    if auto_jit:
        kv.append("TF_XLA_FLAGS: --tf_xla_auto_jit=1")
    return "{" + ", ".join(kv) + "}"


def main():
    rows = list(csv.DictReader(open(sys.argv[1], newline="")))
    cols = ["source", "provenance", "label", "framework_version", "note", "metric", "value", "model",
            "hardware.gpu", "hardware.count", "hardware.host.profile", "batch", "precision", "xla",
            "tf_version", "optimizer", "strategy.name", "strategy.compression", "strategy.num_packs",
            "input_on_device", "env", "set",
            "set_reason"]
    w = csv.DictWriter(sys.stdout, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for r in rows:
        if r["model"] not in MODELS or r["metric"] != "img_per_s" or r["data"] != "synthetic":
            continue
        system = r["source_path"].split("/")[1]
        n = int(r["num_gpus"])
        tf = r["framework_version"].removeprefix("TF ")
        tf = ".".join(tf.split(".")[:2])
        xla = r["xla"] == "yes"
        out = {
            "source": "tfcnn",
            # The log folder: the rows of one folder are one box and software, so ratios
            # (scaling, XLA on/off) pair within it; the file and line name the row itself.
            "provenance": "logs/%s@%s" % (system, r["commit"]),
            "label": r["precision"],
            "framework_version": r["framework_version"] + " tf_cnn_benchmarks",
            "note": MODEL_NOTE.get(r["model"], ""),
            "metric": "throughput",
            "value": r["value"],
            "model": MODELS[r["model"]],
            "hardware.gpu": GPUS[r["gpu"]],
            "hardware.count": n,
            "hardware.host.profile": host(system),
            "batch": int(r["batch_per_gpu"]) * n,
            "precision": "float32" if r["precision"] == "fp32" else "mixed_float16",
            "xla": "true" if xla else "false",
            "tf_version": tf,
            "optimizer": "sgd",
            "strategy.name": "mirrored" if n > 1 else "",
            # --use_fp16 with the default --compact_gradient_transfer all-reduces float16
            # casts of the gradients (variable_mgr.py, preprocess_device_grads).
            "strategy.compression": "fp16" if n > 1 and r["precision"] == "fp16" else "",
            # all_reduce_spec=nccl: batch_allreduce.py's AllReduceSpecAlgorithm hands every
            # gradient to allreduce.py's sum_grad_and_var_all_reduce, one nccl all_sum each
            # (gradient_repacking=0, agg_small_grads_max_bytes=0 by default).
            "strategy.num_packs": 0 if n > 1 else "",
            "input_on_device": "true",
            # benchmark_cnn.py, setup(): os.environ['TF_GPU_THREAD_MODE'] = gpu_thread_mode,
            # 'gpu_private' by default (two threads per GPU, per_gpu_thread_count).
            "env": env(xla and not tf.startswith("1.")),
            "set": "",
            "set_reason": "",
        }
        w.writerow(out)


if __name__ == "__main__":
    main()
