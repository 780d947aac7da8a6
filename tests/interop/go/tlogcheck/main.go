// Command tlogcheck reads a Colibri log the way any tlog client would, with Go's own
// golang.org/x/mod/sumdb/note and golang.org/x/mod/sumdb/tlog: it opens the checkpoint served at
// BASE/log/checkpoint with the log's verifier key, checks the cosignature/v1 lines of the given
// witnesses with crypto/ed25519, rebuilds the tree hash from the tlog-tiles under BASE/log/tile/,
// proves and checks the inclusion of every entry (read from the entry bundles) and the consistency
// of the tree with an older checkpoint. It prints one JSON object and exits 1 on any failure.
//
// Built by tests/interop/test_go_tlog.py with GO111MODULE=off GOPATH=/usr/share/gocode.
//
// Usage: tlogcheck BASE TOKEN LOG_VKEY OLD_CHECKPOINT_FILE [WITNESS_VKEY ...]
package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const height = 8

type result struct {
	Origin          string   `json:"origin"`
	Size            int64    `json:"size"`
	Root            string   `json:"root"`
	Cosigned        []string `json:"cosigned"`
	NotCosigned     []string `json:"not_cosigned"`
	InclusionProved int64    `json:"inclusion_proved"`
	ConsistentFrom  int64    `json:"consistent_from"`
	TilesFetched    int      `json:"tiles_fetched"`
}

type server struct {
	base, token string
	fetched     int
}

func (s *server) get(path string) []byte {
	req, err := http.NewRequest("GET", s.base+"/log/"+path, nil)
	check(err, "request")
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	check(err, "GET "+path)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	check(err, "read "+path)
	if resp.StatusCode != 200 {
		fail("GET %s: HTTP %d: %s", path, resp.StatusCode, body)
	}
	s.fetched++
	return body
}

// tilePath is the C2SP tlog-tiles path of t: Go's sumdb path without its height element.
func tilePath(t tlog.Tile) string {
	return "tile/" + strings.TrimPrefix(t.Path(), fmt.Sprintf("tile/%d/", height))
}

func (s *server) Height() int { return height }

func (s *server) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	data := make([][]byte, len(tiles))
	for i, t := range tiles {
		data[i] = s.get(tilePath(t))
	}
	return data, nil
}

func (s *server) SaveTiles(tiles []tlog.Tile, data [][]byte) {}

// entries reads entry bundle n of width w (the 2-byte big-endian length of each entry, then it).
func (s *server) entries(n int64, w int) [][]byte {
	path := tilePath(tlog.Tile{H: height, L: 0, N: n, W: w})
	path = "tile/entries/" + strings.TrimPrefix(path, "tile/0/")
	bundle := s.get(path)
	var out [][]byte
	for len(bundle) > 0 {
		if len(bundle) < 2 {
			fail("entry bundle %s ends inside a length", path)
		}
		size := int(binary.BigEndian.Uint16(bundle))
		if len(bundle) < 2+size {
			fail("entry bundle %s ends inside an entry", path)
		}
		out = append(out, bundle[2:2+size])
		bundle = bundle[2+size:]
	}
	if len(out) != w {
		fail("entry bundle %s holds %d entries, not %d", path, len(out), w)
	}
	return out
}

func parseCheckpoint(text string) (string, int64, tlog.Hash) {
	lines := strings.SplitN(text, "\n", 4)
	if len(lines) < 4 {
		fail("checkpoint text %q has no origin, size and root lines", text)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	check(err, "checkpoint size")
	raw, err := base64.StdEncoding.DecodeString(lines[2])
	check(err, "checkpoint root")
	var root tlog.Hash
	if len(raw) != len(root) {
		fail("checkpoint root is %d bytes", len(raw))
	}
	copy(root[:], raw)
	return lines[0], size, root
}

// cosigned checks the cosignature/v1 line of the witness vkey (type 0x04) on the opened note.
func cosigned(n *note.Note, vkey string) (string, bool) {
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 {
		fail("witness key %q is not NAME+HASH+KEY", vkey)
	}
	name := parts[0]
	id, err := strconv.ParseUint(parts[1], 16, 32)
	check(err, "witness key hash")
	key, err := base64.StdEncoding.DecodeString(parts[2])
	check(err, "witness key")
	if len(key) != 33 || key[0] != 0x04 {
		fail("witness key %q is not a cosignature/v1 Ed25519 key", vkey)
	}
	sum := sha256.Sum256(append([]byte(name+"\n"), key...))
	if binary.BigEndian.Uint32(sum[:4]) != uint32(id) {
		fail("witness key %q: its hash does not match", vkey)
	}
	for _, sig := range n.UnverifiedSigs {
		if sig.Name != name || sig.Hash != uint32(id) {
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(sig.Base64)
		check(err, "cosignature")
		if len(raw) != 4+8+ed25519.SignatureSize {
			fail("cosignature by %s has %d bytes", name, len(raw))
		}
		timestamp := binary.BigEndian.Uint64(raw[4:12])
		message := fmt.Sprintf("cosignature/v1\ntime %d\n%s", timestamp, n.Text)
		if !ed25519.Verify(ed25519.PublicKey(key[1:]), []byte(message), raw[12:]) {
			fail("cosignature by %s does not verify", name)
		}
		return name, true
	}
	return name, false
}

func main() {
	if len(os.Args) < 5 {
		fail("usage: tlogcheck BASE TOKEN LOG_VKEY OLD_CHECKPOINT_FILE [WITNESS_VKEY ...]")
	}
	s := &server{base: os.Args[1], token: os.Args[2]}
	verifier, err := note.NewVerifier(os.Args[3])
	check(err, "log verifier key")
	opened, err := note.Open(s.get("checkpoint"), note.VerifierList(verifier))
	check(err, "open the served checkpoint")
	origin, size, root := parseCheckpoint(opened.Text)
	out := result{Origin: origin, Size: size, Root: fmt.Sprintf("%x", root[:]), Cosigned: []string{}, NotCosigned: []string{}}
	for _, vkey := range os.Args[5:] {
		if name, ok := cosigned(opened, vkey); ok {
			out.Cosigned = append(out.Cosigned, name)
		} else {
			out.NotCosigned = append(out.NotCosigned, name)
		}
	}

	hashes := tlog.TileHashReader(tlog.Tree{N: size, Hash: root}, s)
	treeHash, err := tlog.TreeHash(size, hashes)
	check(err, "tree hash from the tiles")
	if treeHash != root {
		fail("the tiles give root %x, the checkpoint says %x", treeHash[:], root[:])
	}
	for first := int64(0); first < size; first += 256 {
		width := size - first
		if width > 256 {
			width = 256
		}
		for k, data := range s.entries(first/256, int(width)) {
			index := first + int64(k)
			proof, err := tlog.ProveRecord(size, index, hashes)
			check(err, fmt.Sprintf("inclusion proof of entry %d", index))
			check(tlog.CheckRecord(proof, size, root, index, tlog.RecordHash(data)), fmt.Sprintf("entry %d", index))
			out.InclusionProved++
		}
	}

	old, err := os.ReadFile(os.Args[4])
	check(err, "old checkpoint file")
	oldNote, err := note.Open(old, note.VerifierList(verifier))
	check(err, "open the old checkpoint")
	_, oldSize, oldRoot := parseCheckpoint(oldNote.Text)
	proof, err := tlog.ProveTree(size, oldSize, hashes)
	check(err, "consistency proof")
	check(tlog.CheckTree(proof, size, root, oldSize, oldRoot), "consistency with the old checkpoint")
	out.ConsistentFrom = oldSize
	out.TilesFetched = s.fetched

	var buffer bytes.Buffer
	check(json.NewEncoder(&buffer).Encode(out), "json")
	os.Stdout.Write(buffer.Bytes())
}

func check(err error, what string) {
	if err != nil {
		fail("%s: %v", what, err)
	}
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "tlogcheck: "+format+"\n", args...)
	os.Exit(1)
}
