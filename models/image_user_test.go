package models

import "testing"

func TestContainerUserGivesBareUIDItsOwnGroup(t *testing.T) {
	for in, want := range map[string]string{"1000": "1000:1000", "65534": "65534:65534", "1000:100": "1000:100", "jovyan": "jovyan", " 42 ": "42:42"} {
		if got := ContainerUser(in); got != want {
			t.Errorf("ContainerUser(%q) = %q, want %q", in, got, want)
		}
	}
	img := Image{Name: "x", Image: "x:1", StartCommand: "j --port={port} --base={base_url} --token={token}", RunAsUser: "1000:0"}
	if err := img.Validate(); err == nil {
		t.Error("run_as_user 1000:0 (root's group) was accepted")
	}
}

func TestToolName(t *testing.T) {
	for in, want := range map[string]string{"/lab": "JupyterLab", "/lab/tree/x.ipynb": "JupyterLab", "/tree": "Notebook", "/vscode/": "VS Code", "/rstudio/": "RStudio", "/other": ""} {
		if got := ToolName(in); got != want {
			t.Errorf("ToolName(%q) = %q, want %q", in, got, want)
		}
	}
}
