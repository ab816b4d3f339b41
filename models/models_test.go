package models

import (
	"math"
	"testing"
)

// TestParams checks every zoo model's total and trainable parameter counts against the
// figures model.summary() prints.
//
// Sources: keras.applications models as built by keras/src/applications/*.py with
// include_top=True and the default input size; the figures are the "Total params" /
// "Trainable params" lines of model.summary() (the keras.io applications table lists the same
// totals rounded: 25.6M, 44.7M, 60.4M, 25.6M, 138.4M, 143.7M, 4.3M, 3.5M, 23.9M, 22.9M, 8.1M,
// 5.3M). BERT: Hugging Face bert-base-uncased / bert-large-uncased BertModel (109,482,240 /
// 335,141,888) plus a 2-class head (768*2+2 / 1024*2+2); BertForMaskedLM bert-base-uncased
// 109,514,298. GPT-2: Hugging Face gpt2 124,439,808 and gpt2-medium 354,823,168. ViT-B/16:
// timm vit_base_patch16_224 86,567,656. LSTM: keras.io example "Bidirectional LSTM on IMDB"
// model.summary() 2,757,761.
func TestParams(t *testing.T) {
	tests := []struct {
		name             string
		total, trainable int64
	}{
		{"resnet50", 25_636_712, 25_583_592},
		// NVIDIA's v1.5: Keras's trainable count less the 26,560 conv biases (one per batch-norm
		// channel), plus the 1001st class (2048+1); 53,120 moving statistics on top.
		{"resnet50-v1.5", 25_559_081 + 53_120, 25_559_081},
		{"resnet101", 44_707_176, 44_601_832},
		{"resnet152", 60_419_944, 60_268_520},
		{"resnet50v2", 25_613_800, 25_568_360},
		{"vgg16", 138_357_544, 138_357_544},
		{"vgg19", 143_667_240, 143_667_240},
		{"mobilenet", 4_253_864, 4_231_976},
		{"mobilenetv2", 3_538_984, 3_504_872},
		{"inceptionv3", 23_851_784, 23_817_352},
		{"xception", 22_910_480, 22_855_952},
		{"densenet121", 8_062_504, 7_978_856},
		{"efficientnetb0", 5_330_571, 5_288_548},
		{"bert-base", 109_482_240 + 1538, 109_482_240 + 1538},
		{"bert-base:head=mlm", 109_514_298, 109_514_298},
		{"bert-large", 335_141_888 + 2050, 335_141_888 + 2050},
		{"gpt2", 124_439_808, 124_439_808},
		{"gpt2-medium", 354_823_168, 354_823_168},
		{"vit-b16", 86_567_656, 86_567_656},
		{"lstm", 2_757_761, 2_757_761},
		// MNIST MLP: 784*512+512 + 512*512+512 + 512*10+10.
		{"mlp", 669_706, 669_706},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		m, err := Get(tt.name)
		if err != nil {
			t.Errorf("Get(%q): %v", tt.name, err)
			continue
		}
		seen[m.Name] = true
		if m.Params != tt.total || m.TrainableParams != tt.trainable {
			t.Errorf("Get(%q) params = %d / %d trainable, want %d / %d", tt.name, m.Params, m.TrainableParams, tt.total, tt.trainable)
		}
	}
	for _, n := range Names() {
		if !seen[n] {
			t.Errorf("zoo model %q has no parameter-count test", n)
		}
	}
}

// TestFLOPs checks forward FLOPs (multiply-add = 2) against published figures, within 2%.
func TestFLOPs(t *testing.T) {
	tests := []struct {
		name   string
		gflops float64
		source string
	}{
		// He et al. 2015, "Deep Residual Learning", Table 1: ResNet-50 3.8 x 10^9 multiply-adds
		// (the original v1 with the stride on the first 1x1 conv, as Keras builds it).
		{"resnet50", 2 * 3.8, "He et al. 2015 Table 1"},
		// torchvision's ResNet-50 is v1.5 (stride on the 3x3): its models table gives 4.09
		// GFLOPS (multiply-adds); the 1001st class adds 2 KFLOPs.
		{"resnet50-v1.5", 2 * 4.09, "torchvision models table"},
		{"resnet101", 2 * 7.6, "He et al. 2015 Table 1"},
		{"resnet152", 2 * 11.3, "He et al. 2015 Table 1"},
		// torchvision model table (pytorch.org/vision/stable/models.html), VGG16 "GFLOPS" 15.47
		// (multiply-adds of the same 13 conv + 3 fc layers at 224x224).
		{"vgg16", 2 * 15.47, "torchvision models table"},
		{"vgg19", 2 * 19.63, "torchvision models table"},
		// Sandler et al. 2018, "MobileNetV2", Table 4: 300M multiply-adds at 224, width 1.0.
		{"mobilenetv2", 2 * 0.300, "Sandler et al. 2018 Table 4"},
		// Howard et al. 2017, "MobileNets", Table 8: 1.0 MobileNet-224, 569M mult-adds.
		{"mobilenet", 2 * 0.569, "Howard et al. 2017 Table 8"},
		// Szegedy et al. 2016, "Rethinking the Inception Architecture": 5.72 billion multiply-adds.
		{"inceptionv3", 2 * 5.72, "Szegedy et al. 2016 sec. 6/Table 3 text"},
		// Tan & Le 2019, "EfficientNet", Table 2: B0 0.39B FLOPs (multiply-adds).
		{"efficientnetb0", 2 * 0.39, "Tan & Le 2019 Table 2"},
		// Jiao et al. 2020, "TinyBERT", Table 1: BERT-base (teacher) 22.5B FLOPs at sequence 128
		// (they count 2 per multiply-add: 2 x 85M x 128 + attention).
		{"bert-base", 22.5, "Jiao et al. 2020 (TinyBERT) Table 1"},
		// Dosovitskiy et al. 2021, "An Image is Worth 16x16 Words", Table 6: ViT-B/16 17.6
		// GFLOPs (multiply-adds) at 224.
		{"vit-b16", 2 * 17.6, "Dosovitskiy et al. 2021 Table 6"},
	}
	for _, tt := range tests {
		m, err := Get(tt.name)
		if err != nil {
			t.Fatalf("Get(%q): %v", tt.name, err)
		}
		got := m.FLOPsPerSample / 1e9
		if rel := math.Abs(got-tt.gflops) / tt.gflops; rel > 0.02 {
			t.Errorf("%s FLOPsPerSample = %.3f GFLOPs, want %.3f within 2%% (%s), off by %.1f%%", tt.name, got, tt.gflops, tt.source, 100*rel)
		}
	}
}

func TestHasBatchNorm(t *testing.T) {
	for name, want := range map[string]bool{"resnet50": true, "mobilenetv2": true, "inceptionv3": true,
		"vgg16": false, "bert-base": false, "mlp": false, "lstm": false} {
		m, err := Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if m.HasBatchNorm != want {
			t.Errorf("%s HasBatchNorm = %v, want %v", name, m.HasBatchNorm, want)
		}
	}
}
