package main

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"time"
)

// kernel is a fake kernel: there is no process, only the state Jupyter's
// REST API reports (the portal's idle culler reads execution_state).
type kernel struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	LastActivity   string `json:"last_activity"`
	ExecutionState string `json:"execution_state"`
	Connections    int    `json:"connections"`
}

func (s *server) handleListKernels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	list := make([]kernel, 0, len(s.kernels))
	for _, k := range s.kernels {
		list = append(list, *k)
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, list)
}

func (s *server) handleCreateKernel(w http.ResponseWriter, r *http.Request) {
	k := &kernel{ID: newID(), Name: "python3", LastActivity: now(), ExecutionState: "idle"}
	s.mu.Lock()
	s.kernels[k.ID] = k
	resp := *k
	s.mu.Unlock()
	s.log.Info("kernel started", "id", k.ID)
	writeJSON(w, http.StatusCreated, resp)
}

func (s *server) handleGetKernel(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	k, ok := s.kernels[r.PathValue("id")]
	var resp kernel
	if ok {
		resp = *k
	}
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "no such kernel"})
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *server) handleDeleteKernel(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	_, ok := s.kernels[r.PathValue("id")]
	delete(s.kernels, r.PathValue("id"))
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "no such kernel"})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// setKernel applies f to kernel id under the lock; false if it is gone.
func (s *server) setKernel(id string, f func(*kernel)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.kernels[id]
	if ok {
		f(k)
		k.LastActivity = now()
	}
	return ok
}

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }
