#!/usr/bin/env python3
"""Exports real Keras 3 models for gpusim's importer tests: every keras.applications model and
a model per built-in layer class, each as `model.to_json()` with Keras's own parameter counts.

Ground truth for models/testdata/keras3 (its README says how it was run). Keras and optree are
not installed on the device machine: run with PYTHONPATH=OPTREE_SITE:KERAS_SRC and
KERAS_BACKEND=jax, as keras_fit.py. No GPU work: the models are built (weights=None), not run.

  python3 tools/h200/keras_export.py --parts apps,layers,ops,archive --budget S --out DIR

Writes WORK/export/apps/NAME.json, DIR/export/layers/CLASS.json, DIR/export/ops/NAME.json (each
{"name", "counts": {params, trainable, non_trainable}, "layers": {layer: [params, output
shape]}, "config": to_json()}), WORK/export/archive/*.keras, and WORK/export/errors.json for what
Keras itself refused to build; DIR/export.tar.gz packs them (WORK: --work, /tmp by default).
"""
import argparse
import json
import math
import os
import sys
import tarfile
import time
import traceback


def counts(model):
    import numpy as np
    tr = sum(int(np.prod(w.shape)) for w in model.trainable_weights)
    nt = sum(int(np.prod(w.shape)) for w in model.non_trainable_weights)
    return {"params": int(model.count_params()), "trainable": tr, "non_trainable": nt}


def per_layer(model):
    out = {}
    for l in model.layers:
        try:
            shape = l.output.shape
            shape = json.loads(json.dumps(shape, default=str))
        except Exception:
            shape = None
        out[l.name] = [int(l.count_params()) if l.built else 0, shape]
    return out


def write(out, part, name, model, extra=None):
    d = os.path.join(out, "export", part)
    os.makedirs(d, exist_ok=True)
    rec = {"name": name, "counts": counts(model), "layers": per_layer(model),
           "config": json.loads(model.to_json())}
    if extra:
        rec.update(extra)
    with open(os.path.join(d, name + ".json"), "w") as f:
        json.dump(rec, f, separators=(",", ":"))


def app_variants():
    """Every model constructor of keras.applications and a few of their options."""
    import keras
    apps = keras.applications
    names = sorted(n for n in dir(apps) if n[:1].isupper() and callable(getattr(apps, n)))
    out = [(n, n, {}) for n in names]
    out += [("MobileNet_alpha%s" % a, "MobileNet", {"alpha": a}) for a in (0.25, 0.5, 0.75)]
    out += [("MobileNetV2_alpha%s" % a, "MobileNetV2", {"alpha": a}) for a in (0.35, 0.5, 0.75, 1.3, 1.4)]
    out += [("MobileNetV3Small_minimalistic", "MobileNetV3Small", {"minimalistic": True}),
            ("MobileNetV3Large_minimalistic", "MobileNetV3Large", {"minimalistic": True}),
            ("MobileNetV3Small_alpha0.75", "MobileNetV3Small", {"alpha": 0.75}),
            ("MobileNetV3Large_alpha0.75", "MobileNetV3Large", {"alpha": 0.75}),
            ("ResNet50_notop_avg", "ResNet50", {"include_top": False, "pooling": "avg",
                                               "input_shape": (224, 224, 3)}),
            ("EfficientNetB0_notop_max", "EfficientNetB0", {"include_top": False, "pooling": "max",
                                                           "input_shape": (224, 224, 3)}),
            ("ConvNeXtTiny_notop", "ConvNeXtTiny", {"include_top": False, "input_shape": (224, 224, 3)}),
            ("VGG16_classes10", "VGG16", {"classes": 10}),
            ("EfficientNetV2B0_nopre", "EfficientNetV2B0", {"include_preprocessing": False}),
            ("ConvNeXtTiny_nopre", "ConvNeXtTiny", {"include_preprocessing": False})]
    return out


def mine(items, shard, skip):
    """The items of this process: every N-th from K (--shard K/N), less the names in skip."""
    k, n = (int(v) for v in shard.split("/"))
    return [it for i, it in enumerate(items) if i % n == k and it[0] not in skip]


def part_apps(out, left, errors, shard="0/1", skip=()):
    import keras
    for name, ctor, kw in mine(app_variants(), shard, skip):
        if left() < 10:
            errors["apps/" + name] = "budget"
            continue
        t = time.time()
        try:
            keras.backend.clear_session()
            m = getattr(keras.applications, ctor)(weights=None, **kw)
            write(out, "apps", name, m, {"constructor": ctor, "kwargs": {k: list(v) if isinstance(v, tuple) else v for k, v in kw.items()}})
            print("app", name, round(time.time() - t, 1), flush=True)
        except Exception as e:
            errors["apps/" + name] = repr(e)[:400]
            print("app", name, "error", repr(e)[:200], flush=True)
    # One model under a mixed policy: the float32 output layer and DTypePolicy objects.
    try:
        keras.backend.clear_session()
        keras.mixed_precision.set_global_policy("mixed_float16")
        m = keras.applications.MobileNetV3Small(weights=None)
        write(out, "apps", "MobileNetV3Small_mixed_float16", m, {"constructor": "MobileNetV3Small"})
    except Exception as e:
        errors["apps/MobileNetV3Small_mixed_float16"] = repr(e)[:400]
    finally:
        keras.mixed_precision.set_global_policy("float32")


def layer_specs():
    """(name, layer factory, input shapes, input dtype): one small model per layer class."""
    from keras import layers as L
    img = [(16, 16, 3)]
    seq = [(12, 8)]
    vol = [(8, 8, 8, 3)]
    specs = [
        ("Activation", lambda: L.Activation("gelu"), seq, None),
        ("ActivityRegularization", lambda: L.ActivityRegularization(l1=0.01), seq, None),
        ("AdaptiveAveragePooling1D", lambda: L.AdaptiveAveragePooling1D(4), seq, None),
        ("AdaptiveAveragePooling2D", lambda: L.AdaptiveAveragePooling2D((4, 5)), img, None),
        ("AdaptiveAveragePooling3D", lambda: L.AdaptiveAveragePooling3D((2, 3, 4)), vol, None),
        ("AdaptiveMaxPooling1D", lambda: L.AdaptiveMaxPooling1D(4), seq, None),
        ("AdaptiveMaxPooling2D", lambda: L.AdaptiveMaxPooling2D((4, 5)), img, None),
        ("AdaptiveMaxPooling3D", lambda: L.AdaptiveMaxPooling3D((2, 3, 4)), vol, None),
        ("AdditiveAttention", lambda: L.AdditiveAttention(), [(12, 8), (10, 8)], None),
        ("AlphaDropout", lambda: L.AlphaDropout(0.1), seq, None),
        ("Attention", lambda: L.Attention(score_mode="concat"), [(12, 8), (10, 8)], None),
        ("AugMix", lambda: L.AugMix(), img, None),
        ("AutoContrast", lambda: L.AutoContrast(), img, None),
        ("AveragePooling3D", lambda: L.AveragePooling3D(2), vol, None),
        ("Bidirectional", lambda: L.Bidirectional(L.GRU(6, return_sequences=True)), seq, None),
        ("CategoryEncoding", lambda: L.CategoryEncoding(num_tokens=10, output_mode="multi_hot"), [(4,)], "int32"),
        ("CenterCrop", lambda: L.CenterCrop(8, 10), img, None),
        ("ContrastLimitedAdaptiveHistogramEqualization", lambda: L.ContrastLimitedAdaptiveHistogramEqualization(), img, None),
        ("Conv3DTranspose", lambda: L.Conv3DTranspose(4, 3, strides=2, padding="same"), vol, None),
        ("Conv1DTranspose", lambda: L.Conv1DTranspose(4, 3, strides=2), seq, None),
        ("Conv2DTranspose", lambda: L.Conv2DTranspose(4, 3, strides=2, output_padding=1), img, None),
        ("ConvLSTM1D", lambda: L.ConvLSTM1D(4, 3, return_sequences=True), [(5, 10, 3)], None),
        ("ConvLSTM2D", lambda: L.ConvLSTM2D(4, 3, padding="same"), [(5, 10, 10, 3)], None),
        ("ConvLSTM3D", lambda: L.ConvLSTM3D(2, 3), [(3, 6, 6, 6, 2)], None),
        ("Cropping1D", lambda: L.Cropping1D((1, 2)), seq, None),
        ("Cropping2D", lambda: L.Cropping2D(((1, 0), (2, 3))), img, None),
        ("Cropping3D", lambda: L.Cropping3D(1), vol, None),
        ("CutMix", lambda: L.CutMix(), img, None),
        ("Dense3D", lambda: L.Dense(5), [(4, 6, 7)], None),
        ("DepthwiseConv1D", lambda: L.DepthwiseConv1D(3, depth_multiplier=2), seq, None),
        ("SeparableConv1D", lambda: L.SeparableConv1D(5, 3, depth_multiplier=2), seq, None),
        ("Conv3D", lambda: L.Conv3D(4, 3), vol, None),
        ("Conv2D_groups", lambda: L.Conv2D(6, 3, groups=3), img, None),
        ("Discretization", lambda: L.Discretization(bin_boundaries=[0.0, 1.0, 2.0]), seq, None),
        ("Dot", lambda: L.Dot(axes=(2, 2)), [(12, 8), (10, 8)], None),
        ("EinsumDense", lambda: L.EinsumDense("abc,cde->abde", output_shape=(None, 4, 5), bias_axes="de"), seq, None),
        ("Embedding", lambda: L.Embedding(50, 6), [(7,)], "int32"),
        ("Equalization", lambda: L.Equalization(), img, None),
        ("GaussianDropout", lambda: L.GaussianDropout(0.2), seq, None),
        ("GaussianNoise", lambda: L.GaussianNoise(0.2), seq, None),
        ("GlobalAveragePooling3D", lambda: L.GlobalAveragePooling3D(), vol, None),
        ("GlobalMaxPooling3D", lambda: L.GlobalMaxPooling3D(keepdims=True), vol, None),
        ("GroupNormalization", lambda: L.GroupNormalization(groups=3), [(16, 16, 6)], None),
        ("GroupQueryAttention", lambda: L.GroupQueryAttention(head_dim=4, num_query_heads=4, num_key_value_heads=2), [(12, 8), (10, 6)], None),
        ("GRU", lambda: L.GRU(6), seq, None),
        ("GRU_nobias_before", lambda: L.GRU(6, reset_after=False), seq, None),
        ("HashedCrossing", lambda: L.HashedCrossing(num_bins=16), [(1,), (1,)], "int32"),
        ("Hashing", lambda: L.Hashing(num_bins=8), [(3,)], "int32"),
        ("Identity", lambda: L.Identity(), seq, None),
        ("IntegerLookup", lambda: L.IntegerLookup(vocabulary=[1, 2, 3]), [(3,)], "int32"),
        ("LayerNormalization_rms", lambda: L.LayerNormalization(rms_scaling=True), seq, None),
        ("LSTM", lambda: L.LSTM(6, return_sequences=True), seq, None),
        ("Masking", lambda: L.Masking(), seq, None),
        ("MaxPooling3D", lambda: L.MaxPooling3D(2), vol, None),
        ("MaxNumBoundingBoxes", lambda: L.MaxNumBoundingBoxes(max_number=3), img, None),
        ("MelSpectrogram", lambda: L.MelSpectrogram(sequence_stride=64, fft_length=256, num_mel_bins=32), [(1024,)], None),
        ("MixUp", lambda: L.MixUp(), img, None),
        ("MultiHeadAttention", lambda: L.MultiHeadAttention(2, 4), [(12, 8), (10, 6)], None),
        ("Normalization", lambda: L.Normalization(), seq, None),
        ("Normalization_given", lambda: L.Normalization(mean=0.5, variance=2.0), seq, None),
        ("Permute", lambda: L.Permute((2, 1)), seq, None),
        ("PReLU", lambda: L.PReLU(shared_axes=[1]), seq, None),
        ("RandAugment", lambda: L.RandAugment(), img, None),
        ("RandomColorDegeneration", lambda: L.RandomColorDegeneration(0.5), img, None),
        ("RandomColorJitter", lambda: L.RandomColorJitter(brightness_factor=0.2), img, None),
        ("RandomElasticTransform", lambda: L.RandomElasticTransform(), img, None),
        ("RandomErasing", lambda: L.RandomErasing(), img, None),
        ("RandomGaussianBlur", lambda: L.RandomGaussianBlur(), img, None),
        ("RandomGrayscale", lambda: L.RandomGrayscale(), img, None),
        ("RandomHue", lambda: L.RandomHue(0.2), img, None),
        ("RandomInvert", lambda: L.RandomInvert(), img, None),
        ("RandomPerspective", lambda: L.RandomPerspective(), img, None),
        ("RandomPosterization", lambda: L.RandomPosterization(4), img, None),
        ("RandomSaturation", lambda: L.RandomSaturation(0.2), img, None),
        ("RandomSharpness", lambda: L.RandomSharpness(0.2), img, None),
        ("RandomShear", lambda: L.RandomShear(0.2), img, None),
        ("RepeatVector", lambda: L.RepeatVector(3), [(8,)], None),
        ("Resizing", lambda: L.Resizing(8, 12, crop_to_aspect_ratio=True), img, None),
        ("ReversibleEmbedding", lambda: L.ReversibleEmbedding(50, 6, tie_weights=False), [(7,)], "int32"),
        ("RMSNormalization", lambda: L.RMSNormalization(), seq, None),
        ("RNN", lambda: L.RNN(L.LSTMCell(5)), seq, None),
        ("RNN_stacked", lambda: L.RNN([L.SimpleRNNCell(4), L.GRUCell(3)]), seq, None),
        ("SimpleRNN", lambda: L.SimpleRNN(6), seq, None),
        ("Solarization", lambda: L.Solarization(0.5), img, None),
        ("SpatialDropout3D", lambda: L.SpatialDropout3D(0.2), vol, None),
        ("SpectralNormalization", lambda: L.SpectralNormalization(L.Dense(5)), seq, None),
        ("STFTSpectrogram", lambda: L.STFTSpectrogram(frame_length=64, frame_step=32), [(512, 1)], None),
        ("TernaryDense", lambda: L.TernaryDense(5), seq, None),
        ("TimeDistributed", lambda: L.TimeDistributed(L.Dense(5)), seq, None),
        ("TimeDistributed_conv", lambda: L.TimeDistributed(L.Conv2D(4, 3)), [(3, 10, 10, 2)], None),
        ("UnitNormalization", lambda: L.UnitNormalization(), seq, None),
        ("UpSampling3D", lambda: L.UpSampling3D(2), vol, None),
        ("UpSampling2D_bilinear", lambda: L.UpSampling2D(2, interpolation="bilinear"), img, None),
        ("ZeroPadding3D", lambda: L.ZeroPadding3D(((1, 0), (0, 2), (1, 1))), vol, None),
        ("SeparableConv2D", lambda: L.SeparableConv2D(5, 3, depth_multiplier=2), img, None),
        ("BatchNormalization_noscale", lambda: L.BatchNormalization(scale=False), img, None),
        ("ELU", lambda: L.ELU(), seq, None),
        ("LeakyReLU", lambda: L.LeakyReLU(0.3), seq, None),
        ("ReLU", lambda: L.ReLU(6.0), seq, None),
        ("Softmax", lambda: L.Softmax(), seq, None),
        ("Rescaling", lambda: L.Rescaling(1 / 255.0), img, None),
        ("RandomFlip", lambda: L.RandomFlip(), img, None),
        ("RandomRotation", lambda: L.RandomRotation(0.1), img, None),
        ("RandomZoom", lambda: L.RandomZoom(0.1), img, None),
        ("RandomTranslation", lambda: L.RandomTranslation(0.1, 0.1), img, None),
        ("RandomContrast", lambda: L.RandomContrast(0.1), img, None),
        ("RandomBrightness", lambda: L.RandomBrightness(0.1), img, None),
        ("RandomCrop", lambda: L.RandomCrop(8, 8), img, None),
        ("StringLookup", lambda: L.StringLookup(vocabulary=["a", "b"]), [(3,)], "string"),
        ("TextVectorization", lambda: L.TextVectorization(max_tokens=20, output_sequence_length=6, vocabulary=["a", "b"]), [(1,)], "string"),
    ]
    return specs


def part_layers(out, left, errors, shard="0/1", skip=()):
    import keras
    for name, make, shapes, dtype in mine(layer_specs(), shard, skip):
        if left() < 5:
            errors["layers/" + name] = "budget"
            continue
        try:
            keras.backend.clear_session()
            ins = [keras.Input(shape=s, dtype=dtype or "float32") for s in shapes]
            layer = make()
            y = layer(ins if len(ins) > 1 else ins[0])
            m = keras.Model(ins if len(ins) > 1 else ins[0], y, name=name.lower())
            write(out, "layers", name, m, {"class": type(layer).__name__})
        except Exception as e:
            errors["layers/" + name] = (type(e).__name__ + ": " + str(e))[:400]
            print("layer", name, "error", repr(e)[:160], flush=True)


def part_ops(out, left, errors, shard="0/1", skip=()):
    """Functional models calling keras.ops and Python operators on Keras tensors."""
    import keras
    from keras import ops, layers as L
    keras.backend.clear_session()
    x = keras.Input((8, 8, 6))
    a = x + 3.0                      # Add with a constant (MobileNetV3's hard-swish)
    a = ops.relu6(a) * (1.0 / 6.0)   # Multiply by a constant
    b = x * a                        # Multiply of two tensors
    c = ops.mean(b, axis=[1, 2], keepdims=True)
    d = b - c
    d = ops.square(d) / 2.0
    e = ops.sqrt(d + 1e-3)
    f = ops.concatenate([e, x], axis=-1)
    g = f[:, 1:, ::2, :]
    g = ops.reshape(g, (-1, 7 * 4, 12))
    g = ops.transpose(g, (0, 2, 1))
    h = ops.matmul(g, ops.transpose(g, (0, 2, 1)))
    h = ops.softmax(h, axis=-1)
    h = ops.expand_dims(h, 1)
    h = ops.squeeze(h, axis=1)
    k = L.Dense(4)(h)
    k = ops.maximum(k, 0.0) + ops.sigmoid(k) - ops.tanh(k)
    k = ops.exp(-ops.abs(k))
    k = ops.sum(k, axis=-1)
    k = ops.cast(k, "float32")
    w = ops.max(k, axis=1)
    w = ops.where(w > 0.5, w, 0.0)
    w = ops.clip(w, 0.0, 1.0)
    y = L.Dense(3, activation="softmax")(ops.stack([w, w], axis=-1))
    write(out, "ops", "keras_ops", keras.Model(x, y, name="keras_ops"))
    # Ops through keras.ops.nn/image and slicing by an integer.
    keras.backend.clear_session()
    x = keras.Input((16, 16, 3))
    y = ops.image.resize(x, (8, 8))
    y = ops.gelu(y) + ops.silu(y)
    y = ops.nn.depthwise_conv(y, ops.ones((3, 3, 3, 1)), padding="same") if hasattr(ops.nn, "depthwise_conv") else y
    y = ops.pad(y, [[0, 0], [1, 1], [1, 1], [0, 0]])
    y = ops.average_pool(y, 2, strides=2)
    y = ops.flatten(y) if hasattr(ops, "flatten") else ops.reshape(y, (-1, 75))
    z = y[:, 0]
    z = ops.log(ops.softplus(z) + 1.0)
    z = ops.expand_dims(z, -1) + ops.norm(y, axis=-1, keepdims=True)
    write(out, "ops", "keras_ops_nn", keras.Model(x, z, name="keras_ops_nn"))


def part_archive(out, left, errors, shard="0/1", skip=()):
    """A small model saved as a .keras archive (config.json + weights)."""
    import keras
    from keras import layers as L
    keras.backend.clear_session()
    x = keras.Input((32, 32, 3))
    y = L.Conv2D(8, 3, activation="relu")(x)
    y = L.GlobalAveragePooling2D()(y)
    y = L.Dense(10)(y + 1.0)
    m = keras.Model(x, y, name="small")
    d = os.path.join(out, "export", "archive")
    os.makedirs(d, exist_ok=True)
    m.save(os.path.join(d, "small.keras"))
    write(out, "archive", "small", m)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", default="apps,layers,ops,archive")
    ap.add_argument("--budget", type=float, default=240)
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/keras_export"))
    ap.add_argument("--work", default="/tmp/keras_export_work")
    ap.add_argument("--shard", default="0/1", help="K/N: every N-th app and layer from K")
    ap.add_argument("--skip", default="", help="comma-separated names already exported")
    ap.add_argument("--tar", default="export.tar.gz")
    a = ap.parse_args()
    t0 = time.time()
    left = lambda: a.budget - (time.time() - t0)
    errors = {}
    out = a.work
    import keras
    errors["_keras_version"] = keras.__version__
    for p in a.parts.split(","):
        try:
            {"apps": part_apps, "layers": part_layers, "ops": part_ops,
             "archive": part_archive}[p](out, left, errors, a.shard, set(a.skip.split(",")))
        except Exception:
            errors["part/" + p] = traceback.format_exc()[-800:]
        print("part", p, "done", round(time.time() - t0, 1), flush=True)
    os.makedirs(os.path.join(out, "export"), exist_ok=True)
    with open(os.path.join(out, "export", "errors_%s.json" % a.shard.replace("/", "of")), "w") as f:
        json.dump(errors, f, indent=1, sort_keys=True)
    os.makedirs(a.out, exist_ok=True)
    with tarfile.open(os.path.join(a.out, a.tar), "w:gz") as t:
        t.add(os.path.join(out, "export"), arcname="export")
    print("exported in", round(time.time() - t0, 1), "s", flush=True)


if __name__ == "__main__":
    main()
