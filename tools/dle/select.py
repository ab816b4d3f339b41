#!/usr/bin/env python3
"""Select the rows of the calibration table of NVIDIA's DeepLearningExamples READMEs that
gpusim can simulate, and write them with their provenance and the scenario they map to.

    python3 tools/dle/select.py CALIBRATION_CSV > testdata/dle/dle_tf.csv

CALIBRATION_CSV is the project's nvidia_dle_readmes.csv (outside this repository). The rules,
and the reason each left-out row is left out, are in testdata/dle/README.md; the counts of
left-out rows go to stderr.
"""
import collections
import csv
import re
import sys

# DLE model name -> (gpusim model spec, optimizer, why).
MODELS = {
    "ResNet-50 v1.5": ("resnet50-v1.5", "momentum",
                       "ConvNets resnet50v1.5: SGD momentum 0.9 (model/resnet.py MomentumOptimizer)"),
    "EfficientNet-B0": ("efficientnetb0", "momentum",
                       "TensorFlow2 efficientnet_v1: keras EfficientNetB0 graph"),
    "BERT-large SQuAD v1.1 fine-tuning": ("bert-large:seq=384", "adam",
                       "README: fine tuning results use sequence length 384; Adam with weight decay; "
                       "gpusim's classification head stands in for the 1024x2 span head"),
}
# The TF1 scripts' optimizer where it differs from the TF2 ones'.
TF1_OPTIMIZER = {
    "BERT-large SQuAD v1.1 fine-tuning": ("bert-adamw",
                       "README: fine tuning results use sequence length 384; TF1 optimization.py "
                       "AdamWeightDecayOptimizer (per-variable TF ops, clip_by_global_norm); "
                       "gpusim's classification head stands in for the 1024x2 span head"),
}
# BERT pre-training runs LAMB once per global batch of 65,536 (phase 1) or 32,768 (phase 2)
# sequences, hundreds of micro-batches per GPU (run_pretraining_lamb.sh; the tables' notes give
# grad_accum where they state it). 16 micro-batches per update already puts the LAMB update
# under 1% of the step: gpusim gives 202.1 seq/s with 16 and 203.3 with 1024 (V100 32 GB, AMP,
# batch 64, sequence 128), and simulates 64 times fewer micro-steps.
PRETRAIN_ACCUMULATION = 16
PRETRAIN_NOTE = ("BERT-large pre-training, masked-LM head, LAMB; gradient accumulation 16 stands in "
                 "for the recipe's hundreds (the update is under 1% of the step either way)")
# What a README version itself says about its pre-training rows that the table's columns do
# not carry: the 2019-2020 tables (TF 19.08 container) state "steady state throughput with
# number of accumulation steps set to 1" above each table, so the LAMB update runs every step.
README_ACCUMULATION = {
    ("TensorFlow/LanguageModeling/BERT/README.md", "58a3ed6b"): (
        1, "README: \"steady state throughput with number of accumulation steps set to 1\" "
           "(the LAMB update runs every step)"),
    # The 2019 tables (TF 19.06) use the same script, the same words ("steady state
    # throughput") and, on DGX-1 32GB and DGX-2, the same batches per GPU as the 19.08 tables
    # that replaced them (9cd39466), which a later edit (cef4bab3, wording only) labels
    # "number of accumulation steps set to 1". Their 1-GPU figures lie within 1-14% of the
    # 19.08 ones (130.2/140.3, 33.5/34.3, 22.1/25.6, 6.3/6.5, 141.3/143.2, 35.8/36.3,
    # 23.9/26.9, 6.8/6.9), where the 20.06 tables, which state thousands of accumulation
    # steps (9de48bc9), are 1.2-2.2x faster at the same batches: they were measured the same
    # way, with the update every step.
    ("TensorFlow/LanguageModeling/BERT/README.md", "8749cf39"): (
        1, "README history: the next version (9cd39466, TF 19.08) re-measures these tables with "
           "the same script, words and batches and states \"accumulation steps set to 1\"; "
           "the 1-GPU figures agree within 1-14% (the LAMB update runs every step)"),
}
# Where a README version's own Quick Start Guide gives the command of a row family, the XLA
# flag of that command, keyed by (source_path, commit, DLE model, precision). The TF1 tables
# of 2019-20 and the TF2 SQuAD tables (which say "To achieve these same results, follow the
# Quick Start Guide") run FP32 without XLA and mixed precision with it; the 20.06 tables
# (9de48bc9, 1113674c) show no FP32 command and their scripts/configs/*_config.sh pass
# use_xla=true for fp32, so those rows keep the scripts' default.
TF1 = "TensorFlow/LanguageModeling/BERT/README.md"
TF2 = "TensorFlow2/LanguageModeling/BERT/README.md"
SQUAD, PRETRAIN = "BERT-large SQuAD v1.1 fine-tuning", "BERT-large pre-training (LAMB)"


def _quick_start(xla, what, cmd):
    """(use_xla, why) of a TF1 row family whose README Quick Start says "For WHAT training
    with[out] XLA using a DGX-1 V100 32G, run: CMD ..."."""
    return ("yes" if xla else "no",
            "README Quick Start: \"For %s training %s XLA using a DGX-1 V100 32G, run: %s ...\" (use_xla %s)"
            % (what, "with" if xla else "without", cmd, "true" if xla else "false"))


_TF1_SQUAD_2019 = _quick_start(False, "FP32", "bash scripts/run_squad.sh 5 5e-6 fp32 false 8")
_TF1_SQUAD_2019_AMP = _quick_start(True, "FP16", "bash scripts/run_squad.sh 10 5e-6 fp16 true 8")
_TF1_SQUAD = _quick_start(False, "SQuAD 2.0 FP32", "bash scripts/run_squad.sh 5 5e-6 fp32 false 8 384 128 large")
_TF1_SQUAD_AMP = _quick_start(True, "SQuAD 1.1 FP16", "bash scripts/run_squad.sh 10 5e-6 fp16 true 8 384 128 large")
_TF1_PRETRAIN = _quick_start(False, "BERT Large FP32",
                             "bash scripts/run_pretraining_lamb.sh 64 8 8 7.5e-4 5e-4 fp32 false 8")
_TF1_PRETRAIN_AMP = _quick_start(True, "BERT Large FP16",
                                 "bash scripts/run_pretraining_lamb.sh 64 8 8 7.5e-4 5e-4 fp16 true 8")
_TF2_SQUAD = ("no", "the table: \"To achieve these same results, follow the Quick Start Guide\"; its Quick Start: "
              "\"For SQuAD 2.0 FP32 training without XLA using a DGX-1 V100 32G, run: bash scripts/run_squad.sh "
              "8 8 5e-6 fp32 false large 2.0 2\" (use_xla false; scripts/configs/squad_config.sh, which the table "
              "does not cite, passes use_xla=true)")
_TF2_SQUAD_AMP = ("yes", "the table: \"To achieve these same results, follow the Quick Start Guide\"; its Quick "
                  "Start: \"For SQuAD 1.1 FP16 training with XLA using a DGX-1 V100 32G, run: bash "
                  "scripts/run_squad.sh 8 12 5e-6 fp16 true large 1.1 2\" (use_xla true)")
README_XLA = {}
for c in ("ec9eaf73", "fb55bd24"):
    README_XLA[(TF1, c, SQUAD, "fp32")] = _TF1_SQUAD_2019
    README_XLA[(TF1, c, SQUAD, "amp_fp16")] = _TF1_SQUAD_2019_AMP
for c in ("8749cf39", "58a3ed6b"):
    README_XLA[(TF1, c, SQUAD, "fp32")] = _TF1_SQUAD
    README_XLA[(TF1, c, SQUAD, "amp_fp16")] = _TF1_SQUAD_AMP
    README_XLA[(TF1, c, PRETRAIN, "fp32")] = _TF1_PRETRAIN
    README_XLA[(TF1, c, PRETRAIN, "amp_fp16")] = _TF1_PRETRAIN_AMP
README_XLA[(TF2, "7ee81a16", SQUAD, "fp32")] = _TF2_SQUAD
README_XLA[(TF2, "7ee81a16", SQUAD, "amp_fp16")] = _TF2_SQUAD_AMP
# Cells that the README itself shows to be copy errors, left out with the reason; keyed by
# (source_path, commit, table heading prefix, gpu, num_gpus, precision, value).
README_ERRORS = {}
for n, v in (("1", "31.33"), ("4", "94.19"), ("8", "155.53")):
    README_ERRORS[("TensorFlow/LanguageModeling/BERT/README.md", "36a6985e",
                   "Fine-tuning training performance for SQuAD v1.1 on DGX-1 32GB", "V100-32GB", n, "fp32", v)] = (
        "README copy error: the FP32 batch-10 column holds the mixed-precision batch-10 figures "
        "of the 2019 table (8749cf39: 31.33, 94.19, 155.53 mixed precision; the README notes that "
        "batch 10 runs out of memory in FP32); 9de48bc9 corrects it to 10.42, 39.77, 79.37")
for n, v in (("1", "32.72"), ("4", "100.73"), ("8", "168.92"), ("16", "249.54")):
    README_ERRORS[("TensorFlow/LanguageModeling/BERT/README.md", "36a6985e",
                   "Fine-tuning training performance for SQuAD v1.1 on DGX-2 32GB", "V100-32GB", n, "fp32", v)] = (
        "README copy error: the FP32 batch-10 column holds the mixed-precision batch-10 figures "
        "of the 2019 table (8749cf39: 32.72, 100.73, 168.92, 249.54 mixed precision); 9de48bc9 "
        "corrects it to 11.15, 42.91, 85.08, 156.29")
README_ERRORS[("TensorFlow/LanguageModeling/BERT/README.md", "9de48bc9",
               "Pre-training training performance: single-node on DGX-2 32GB", "V100-32GB", "1", "fp32", "35.32")] = (
    "README copy error: the 1-GPU FP32 sequence-128 cell repeats the table's 1-GPU mixed-precision "
    "sequence-512 cell (35.32), and the table's own weak scaling from it is 5.47 at 4 GPUs and "
    "21.57 at 16; DGX-1 32GB gives 46.78 for the same run")
# The TF2 BERT scripts build the TF Model Garden's encoder (official/nlp/modeling), which casts
# to float32 around its layer norms and GELU whatever the Keras policy (layers/transformer.py).
TF2_BERT_NOTE = ("TF2 scripts: the TF Model Garden's BERT (official/nlp/modeling/layers/transformer.py), "
                 "layer norms, residual adds and GELU in float32 under mixed_float16")
# The TF1 scripts build google-research/bert's modeling.py (NVIDIA's copy): tf.contrib.layers
# layer_norm, the tanh GELU, tf.nn.dropout, the transposes and masked softmax of
# attention_layer, which TF runs op by op without XLA.
TF1_BERT_NOTE = ("TF1 scripts: google-research/bert modeling.py (tf.contrib.layers.layer_norm, tanh gelu, "
                 "tf.nn.dropout, transposed attention)")
# Their --enable_xla is tf.config.optimizer.set_jit(True) (official/utils/misc/keras_utils.py
# set_config_v2): auto-clustering at global_jit_level ON_1, which TF_XLA_FLAGS states for gpusim.
# Their fine-tuning optimizer: the Model Garden's AdamWeightDecay after a global-norm clip
# (optimization.py, model_training_utils.py _replicated_step).
TF2_ADAMW_NOTE = ("optimizer: AdamWeightDecay (decay assign_sub, then ResourceApplyAdam) after "
                  "tf.clip_by_global_norm, every step")
TF2_AUTO_JIT_ENV = "TF_XLA_FLAGS=--tf_xla_auto_jit=1"
TF2_AUTO_JIT_NOTE = ("XLA is auto-clustering (keras_utils.set_config_v2: tf.config.optimizer.set_jit(True)), "
                     "written as TF_XLA_FLAGS=--tf_xla_auto_jit=1")
# TF1's automatic mixed precision is grappler's graph rewrite (BERT optimization.py
# enable_mixed_precision_graph_rewrite; ConvNets sets TF_ENABLE_AUTO_MIXED_PRECISION=1);
# the TF2 scripts use a Keras mixed_float16 policy.
TF1_AMP_ENV = "TF_ENABLE_AUTO_MIXED_PRECISION=1"
GPUS = {"V100-16GB": "v100-16gb", "V100-32GB": "v100-32gb", "A100-40GB": "a100-40gb", "A100-80GB": "a100-80gb"}
PRECISION = {"fp32": "float32", "tf32": "float32", "amp_fp16": "mixed_float16"}

# The columns: the DLE table's own (provenance; its precision is the row's label, its metric
# the unit), then the measurement-set columns gpusim reads (validate/set.go): provenance,
# label, metric (throughput, or run_mean with run_steps), value, the scenario keys the row
# runs with, and set: further scenario overrides as --set text, each with its reason in
# set_reason.
OUT = ["source_path", "commit", "commit_date", "framework_version", "system", "dle_gpu", "num_gpus",
       "dle_model", "label", "xla_source", "batch_per_gpu", "unit", "data", "table_heading", "mapping_note",
       "source", "provenance", "note", "metric", "value", "run_steps",
       "model", "hardware.gpu", "hardware.count", "hardware.host.profile", "batch", "accumulation_steps",
       "precision", "xla", "optimizer", "tf_version", "env", "set", "set_reason"]


# What each README version's scripts ran beyond the table's columns, as scenario overrides
# (--set text) with the reason for each: the per-commit facts live here, where the commit is
# data, not in gpusim's Go.
CONVNETS = "TensorFlow/Classification/ConvNets/"
BERT_TF1 = "TensorFlow/LanguageModeling/BERT/README.md"
# TF1 BERT README commits whose optimization.py all-reduces uncompressed gradients under --amp
# too (create_optimizer: hvd.DistributedOptimizer(optimizer, sparse_as_dense=True,
# compression=Compression.none)); 8749cf39 and every later table's code passes
# Compression.fp16 when use_fp16.
BERT_UNCOMPRESSED = {"ec9eaf73", "fb55bd24"}
# TF1 BERT README commits whose tables come after 96138d50 ("[BERT/TF] Updating for Ampere",
# the commit that wrote the 20.06 tables): from there run_squad.py and run_pretraining.py call
# tf.enable_resource_variables() when --use_xla and --amp are both set; 5b24223f had added it
# for every XLA run a month before, and no table was written between the two. The earlier
# tables (TF 19.03-19.08 containers) ran reference variables, as do the FP32 and TF32 rows of
# the later ones.
BERT_RESOURCE_VARIABLES = {"96138d50", "1113674c", "9de48bc9"}
# ConvNets' runner.py thread counts were changed by b2e7f4a2 ("Performance fix"), which
# re-measured only the DGX A100 table of 415a9aa3; the DGX-1 and DGX-2 figures of 415a9aa3
# date from 4eaa4434 with the earlier runner (git log -S on their throughputs shows no later
# change), as do e0f399de's and 5d36b4fd's.
CONVNETS_THREADS_FIX = {("415a9aa3", "DGX A100")}
# ConvNets README commits whose tables ran --use_tf_amp alone (the README's benchmark
# commands): the graph rewrite's dynamic loss scaling, not training_perf.sh's static scale.
CONVNETS_DYNAMIC_LOSS_SCALE = {"e0f399de"}
# Logical CPUs of each box, cpu_count() in runner.py (the DGX datasheets: DGX-1 2x Xeon
# E5-2698 v4, 80 threads; DGX-2 2x Xeon Platinum 8168, 96; DGX A100 2x EPYC 7742, 256).
BOX_CPUS = {"DGX-1": 80, "DGX-2": 96, "DGX A100": 256}
HOSTS = {"DGX-1": "dgx-1", "DGX-2": "dgx-2", "DGX A100": "dgx-a100"}
# SQuAD v1.1's training questions (train-v1.1.json; DeepLearningExamples issue 51 quotes
# run_squad.py's "Sentences processed = 175198" for two epochs) and scripts/run_squad.sh's
# epochs=2.0 at the run-mean commits.
SQUAD_V11_TRAIN_EXAMPLES = 87599
SQUAD_EPOCHS = 2.0
# The TF1 BERT README commits whose SQuAD tables give the whole training run's mean, not its
# steady state: 8749cf39 (19.06) and 58a3ed6b (19.08) "Performance (in sentences per second)
# is the mean throughput from 2 epochs" (run_squad.py's "Throughput Average (sentences/sec)
# with overhead", num_train_steps * global_batch_size / the wall time of estimator.train);
# ec9eaf73 (19.03) "averaged over an entire training epoch" (its run_squad.py divides by the
# sum of every session.run's time, the first step's compile included). NVIDIA's next edit of
# those tables (83fceae5, read at fb55bd24) re-measured them as steady state.
RUN_MEAN_TABLES = {"ec9eaf73", "8749cf39", "58a3ed6b"}


def run_steps(r, spec, gpus, batch):
    """num_train_steps of the run whose mean a run-mean row gives (run_squad.py at those
    commits: int(len(train_examples) / global_batch_size * num_train_epochs)); 0 otherwise."""
    if r["source_path"] != BERT_TF1 or r["commit"] not in RUN_MEAN_TABLES or not spec.startswith("bert-large:seq=384,"):
        return 0
    return int(SQUAD_V11_TRAIN_EXAMPLES / (batch * gpus) * SQUAD_EPOCHS)


def overrides(r, spec, xla, data, gpus, box):
    """The row's scenario overrides beyond its key columns: [(key=value, reason)]."""
    out = []
    bert = spec.startswith("bert")
    resnet = spec.startswith("resnet50")
    amp = r["precision"] == "amp_fp16"
    if gpus > 1:
        out.append(("strategy.name=horovod", "one Horovod process per GPU (resnet50v1.5/training/training_perf.sh: "
                    "mpiexec -np N python3 main.py; BERT's scripts/run_squad.sh and run_pretraining.sh: mpirun with --horovod)"))
        if bert and amp and r["commit"] not in BERT_UNCOMPRESSED:
            out.append(("strategy.compression=fp16", "BERT with --amp all-reduces float16 gradients: TF1 optimization.py "
                        "hvd.DistributedOptimizer(compression=Compression.fp16 if use_fp16 ...), TF2 official/modeling/"
                        "model_training_utils.py hvd.DistributedGradientTape(compression=Compression.fp16 if use_float16 ...)"))
    if (r["source_path"] == BERT_TF1 and xla == "yes" and amp and r["commit"] in BERT_RESOURCE_VARIABLES
            and tf_version(r["framework_version"]).startswith("1.")):
        out.append(("tf.resource_variables=true", "run_squad.py / run_pretraining.py: tf.enable_resource_variables() "
                    "when --use_xla and --amp (from 96138d50, the 20.06 tables)"))
    if resnet and data == "real":
        out += resnet_input(r, gpus, box)
    if resnet and r["source_path"].startswith(CONVNETS):
        out.append(("l2_decay=true", "model/resnet.py ResnetModel.__call__: tf.nn.l2_loss of every trainable variable "
                    "but batch norm's, times weight_decay 1e-4, added to the cross entropy (not in MomentumOptimizer)"))
        if amp and r["commit"] not in CONVNETS_DYNAMIC_LOSS_SCALE:
            out.append(("static_loss_scale=128", "training_perf.sh passes --static_loss_scale 128 under --amp (from "
                        "5d36b4fd: --use_static_loss_scaling --loss_scale=128): FixedLossScalerOptimizer, "
                        "TF_ENABLE_AUTO_MIXED_PRECISION_LOSS_SCALING=0"))
    return out


def resnet_input(r, gpus, box):
    """ConvNets' tf.data pipeline over ImageNet's TFRecords (training_perf.sh passes no
    --use_dali): utils/data_utils.py get_tfrecords_input_fn, one pipeline per Horovod rank."""
    out = [
        ("input.prefetch=autotune", "get_tfrecords_input_fn: prefetch(AUTOTUNE)"),
        ("input.map.parallel_calls=10", "map_and_batch(num_parallel_calls=num_threads) with runtime/runner.py's "
         "num_preprocessing_threads = 10 (no DALI)"),
        ("input.cache=none", "get_tfrecords_input_fn caches nothing"),
        ("input.drop_remainder=true", "map_and_batch(..., drop_remainder=True)"),
        ("input.element_bytes=%d" % (224 * 224 * 3 * 4), "utils/image_processing.py ends with tf.image.resize_images, "
         "whose output is float32: a 224x224 RGB image of 4-byte floats; model/resnet.py casts on the GPU"),
        ("input.prefetch_to_device=true", "model/resnet.py _stage: a CPU then a GPU StagingArea grouped into the train "
         "op, filled by PrefillStagingAreasHook, so step k copies batch k+1"),
    ]
    cpus = BOX_CPUS.get(box)
    if cpus:
        if (r["commit"], box) in CONVNETS_THREADS_FIX:
            n, why = max(2, cpus // max(gpus, 8) - 2), "max(2, cpu_count() // max(hvd.size(), 8) - 2) (b2e7f4a2)"
        elif gpus > 1:
            n, why = max(2, cpus // gpus - 2), "max(2, cpu_count() // hvd.size() - 2) under Horovod (before b2e7f4a2)"
        else:
            n, why = 4, "4 without Horovod (before b2e7f4a2)"
        out.append(("input.map.threads=%d" % n, "runtime/runner.py _get_session_config: inter_op_parallelism_threads = "
                    "%s, the pool TF 1.15 runs the map calls on; cpu_count() %d on a %s" % (why, cpus, box)))
    return out


def tf_version(framework):
    """MAJOR.MINOR of the row's TensorFlow: "TF 1.15 (NGC 20.06-py3)" gives 1.15; the TF2
    rows name only the container, and NGC 21.02's TensorFlow 2 is 2.4.0 (NGC TensorFlow
    release notes, 21.02)."""
    m = re.match(r"TF (\d+)\.(\d+)", framework)
    if m:
        return "%s.%s" % m.groups()
    if "NGC 21.02" in framework:
        return "2.4"
    raise ValueError("framework_version %r: no TensorFlow release" % framework)


def gpu_profile(gpu, system):
    # DGX-2 carries V100-SXM3-32GB parts behind NVSwitch (DGX-2 datasheet), DGX-1 SXM2 ones.
    if system == "DGX-2" and gpu == "V100-32GB":
        return "v100-sxm3-32gb"
    return GPUS[gpu]


def system(heading):
    for key in ("DGX-2H", "DGX-2", "DGX-1", "DGX A100", "DGX-A100"):
        if key in heading:
            return key.replace("DGX-A100", "DGX A100")
    return ""


def main(path):
    skipped = collections.Counter()
    seen = set()
    w = csv.DictWriter(sys.stdout, fieldnames=OUT, lineterminator="\n")
    w.writeheader()
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            m = MODELS.get(r["model"])
            accumulation = "1"
            if r["model"] == "BERT-large pre-training (LAMB)":
                seq = re.search(r"seq_len=(\d+)", r["notes"])
                if "multi-node" in r["notes"]:
                    skipped["multi-node (gpusim simulates one host)"] += 1
                    continue
                if seq is None:
                    skipped["BERT-large pre-training without a stated sequence length"] += 1
                    continue
                m = ("bert-large:seq=%s,head=mlm" % seq.group(1), "lamb", PRETRAIN_NOTE)
                if r["source_path"].startswith("TensorFlow/"):
                    m = (m[0], "bert-lamb", PRETRAIN_NOTE + "; TF1 optimization.py LAMBOptimizer (per-variable TF ops)")
                accumulation = str(PRETRAIN_ACCUMULATION)
                fact = README_ACCUMULATION.get((r["source_path"], r["commit"]))
                if fact:
                    accumulation = str(fact[0])
                    m = (m[0], m[1], m[2] + "; " + fact[1])
            if m is None:
                skipped["model gpusim lacks: " + r["model"]] += 1
                continue
            if r["metric"] not in ("img_per_s", "seq_per_s"):
                skipped["not a throughput (%s)" % r["metric"]] += 1
                continue
            if not r["batch_per_gpu"]:
                skipped["batch per GPU not stated"] += 1
                continue
            xla, src = r["xla"], "stated"
            quick = README_XLA.get((r["source_path"], r["commit"], r["model"], r["precision"]))
            if xla == "not stated" and quick:
                xla, src = quick
            elif xla == "not stated":
                if r["xla_inferred"].startswith("probably on"):
                    xla, src = "yes", "inferred: " + r["xla_inferred"]
                else:
                    skipped["XLA neither stated nor inferable"] += 1
                    continue
            err = next((why for k, why in README_ERRORS.items()
                        if (r["source_path"], r["commit"]) == k[:2] and r["table_heading"].startswith(k[2])
                        and (r["gpu"], r["num_gpus"], r["precision"], r["value"]) == k[3:]), None)
            if err:
                skipped[err] += 1
                continue
            notes = r["notes"].replace("data=real ImageNet/dataset unless README says synthetic", "")
            data = "synthetic" if re.search("synthetic", notes + r["table_heading"], re.I) else "real"
            key = (r["source_path"], r["commit"], r["gpu"], r["num_gpus"], r["precision"], xla,
                   r["batch_per_gpu"], r["value"], m[0])
            if key in seen:
                skipped["duplicate of a row of another table of the same README version"] += 1
                continue
            seen.add(key)
            spec, opt, note = m[0], m[1], m[2]
            if r["model"] in TF1_OPTIMIZER and r["source_path"].startswith("TensorFlow/"):
                opt, note = TF1_OPTIMIZER[r["model"]]
            env = TF1_AMP_ENV if r["source_path"].startswith("TensorFlow/") and r["precision"] == "amp_fp16" else ""
            if r["source_path"].startswith("TensorFlow/LanguageModeling/BERT/"):
                spec += ",impl=google-research"
                note += "; " + TF1_BERT_NOTE
            if r["source_path"].startswith("TensorFlow2/LanguageModeling/BERT/"):
                spec += ",impl=model-garden"
                note += "; " + TF2_BERT_NOTE
                if xla == "yes":
                    env, note = TF2_AUTO_JIT_ENV, note + "; " + TF2_AUTO_JIT_NOTE
                if opt == "adam":
                    opt, note = "model-garden-adamw", note + "; " + TF2_ADAMW_NOTE
            box = system(r["table_heading"])
            gpus, per_gpu, acc = int(r["num_gpus"]), int(r["batch_per_gpu"]), int(accumulation)
            sets = overrides(r, spec, xla, data, gpus, box)
            steps = run_steps(r, spec, gpus, per_gpu * acc)
            w.writerow({
                "source_path": r["source_path"], "commit": r["commit"], "commit_date": r["commit_date"],
                "framework_version": r["framework_version"], "system": box,
                "dle_gpu": r["gpu"], "num_gpus": r["num_gpus"], "dle_model": r["model"],
                "label": r["precision"], "xla_source": src,
                "batch_per_gpu": r["batch_per_gpu"], "unit": r["metric"],
                "data": data, "table_heading": r["table_heading"], "mapping_note": note,
                "source": "dle", "provenance": '%s@%s, "%s"' % (r["source_path"], r["commit"], r["table_heading"]),
                "note": "" if src == "stated" else "XLA " + src,
                "metric": "run_mean" if steps else "throughput", "value": r["value"], "run_steps": steps or "",
                "model": spec, "hardware.gpu": gpu_profile(r["gpu"], box), "hardware.count": gpus,
                "hardware.host.profile": HOSTS.get(box, ""), "batch": per_gpu * gpus * acc,
                "accumulation_steps": accumulation,
                "precision": PRECISION[r["precision"]], "xla": "true" if xla == "yes" else "false", "optimizer": opt,
                "env": "{%s}" % env.replace("=", ": ", 1) if env else "",
                "tf_version": tf_version(r["framework_version"]),
                "set": "; ".join(kv for kv, _ in sets),
                "set_reason": " | ".join("%s: %s" % (kv, why) for kv, why in sets),
            })
    for k, v in sorted(skipped.items()):
        print("skipped %4d: %s" % (v, k), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
