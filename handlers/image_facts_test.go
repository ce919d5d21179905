package handlers

import (
	"testing"

	"workbench/models"
	"workbench/templates"
)

func TestImageFacts(t *testing.T) {
	cases := []struct {
		img  models.Image
		want templates.ImageFacts
	}{
		{models.Image{Image: "quay.io/jupyter/pytorch-notebook:cuda12-python-3.11", Tags: "CUDA 12,PyTorch,Python 3.11"},
			templates.ImageFacts{Framework: "PyTorch", CUDA: "12", Python: "3.11"}},
		{models.Image{Image: "nvcr.io/nvidia/pytorch:24.10-py3", Tags: "CUDA 12.6,PyTorch 2.5,NGC"},
			templates.ImageFacts{Framework: "PyTorch 2.5", CUDA: "12.6", Python: "3"}},
		{models.Image{Image: "quay.io/jupyter/tensorflow-notebook:cuda-latest", Tags: "CUDA,TensorFlow,Keras"},
			templates.ImageFacts{Framework: "TensorFlow", CUDA: "yes"}},
		{models.Image{Image: "localhost:5000/plain", Tags: ""}, templates.ImageFacts{}},
	}
	for _, c := range cases {
		got := imageFacts(c.img)
		if got.Framework != c.want.Framework || got.CUDA != c.want.CUDA || got.Python != c.want.Python {
			t.Errorf("%s (%s): got %+v, want %+v", c.img.Image, c.img.Tags, got, c.want)
		}
	}
}
