// Command receiptcheck proves an answer's receipt (SPEC §22) the way any tlog client would, with
// Go's own golang.org/x/mod/sumdb/note and golang.org/x/mod/sumdb/tlog: it opens the checkpoint
// served at BASE/log/checkpoint with the log's verifier key, checks that its origin is the
// receipt's, proves the receipt's index included from the tlog-tiles under BASE/log/tile/ with
// the receipt's leaf as the entry (tlog.RecordHash hashes it as RFC 9162 does), and checks that
// the entry bundle holds that leaf at that index. It prints one JSON object and exits 1 on any
// failure.
//
// Built by tests/interop/test_receipts.py with GO111MODULE=off GOPATH=/usr/share/gocode.
//
// Usage: receiptcheck BASE TOKEN LOG_VKEY ORIGIN INDEX LEAF_HEX
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
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
	Origin string `json:"origin"`
	Size   int64  `json:"size"`
	Index  int64  `json:"index"`
	Proved bool   `json:"proved"`
	Proof  int    `json:"proof_hashes"`
}

type server struct{ base, token string }

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

// entry is entry `index` of the log of `size` entries, read from its entry bundle.
func (s *server) entry(index, size int64) []byte {
	n := index / 256
	width := size - n*256
	if width > 256 {
		width = 256
	}
	path := tilePath(tlog.Tile{H: height, L: 0, N: n, W: int(width)})
	bundle := s.get("tile/entries/" + strings.TrimPrefix(path, "tile/0/"))
	for k := int64(0); len(bundle) >= 2; k++ {
		length := int(binary.BigEndian.Uint16(bundle))
		if len(bundle) < 2+length {
			fail("entry bundle %d ends inside an entry", n)
		}
		if n*256+k == index {
			return bundle[2 : 2+length]
		}
		bundle = bundle[2+length:]
	}
	fail("entry bundle %d holds no entry %d", n, index)
	return nil
}

func main() {
	if len(os.Args) != 7 {
		fail("usage: receiptcheck BASE TOKEN LOG_VKEY ORIGIN INDEX LEAF_HEX")
	}
	s := &server{base: os.Args[1], token: os.Args[2]}
	verifier, err := note.NewVerifier(os.Args[3])
	check(err, "log verifier key")
	index, err := strconv.ParseInt(os.Args[5], 10, 64)
	check(err, "receipt index")
	leaf, err := hex.DecodeString(os.Args[6])
	check(err, "receipt leaf")

	opened, err := note.Open(s.get("checkpoint"), note.VerifierList(verifier))
	check(err, "open the served checkpoint")
	lines := strings.SplitN(opened.Text, "\n", 4)
	if len(lines) < 4 {
		fail("checkpoint text %q has no origin, size and root lines", opened.Text)
	}
	if lines[0] != os.Args[4] {
		fail("the checkpoint's origin is %q, the receipt's %q", lines[0], os.Args[4])
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
	if index >= size {
		fail("the checkpoint (size %d) does not cover index %d yet", size, index)
	}

	hashes := tlog.TileHashReader(tlog.Tree{N: size, Hash: root}, s)
	proof, err := tlog.ProveRecord(size, index, hashes)
	check(err, "inclusion proof from the tiles")
	check(tlog.CheckRecord(proof, size, root, index, tlog.RecordHash(leaf)), "the receipt's leaf at its index")
	if stored := s.entry(index, size); !bytes.Equal(stored, leaf) {
		fail("entry %d is %x in the entry bundle, the receipt says %x", index, stored, leaf)
	}

	var buffer bytes.Buffer
	out := result{Origin: lines[0], Size: size, Index: index, Proved: true, Proof: len(proof)}
	check(json.NewEncoder(&buffer).Encode(out), "json")
	os.Stdout.Write(buffer.Bytes())
}

func check(err error, what string) {
	if err != nil {
		fail("%s: %v", what, err)
	}
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "receiptcheck: "+format+"\n", args...)
	os.Exit(1)
}
