package web

import (
	"bytes"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// decoders are reused: a decoder's first string allocates its 4 KiB cache
// of strings, more than the rest of a small body's decoding.
// Each keeps the reader it reads from, reset for each body.
var decoders = sync.Pool{New: func() any {
	r := bytes.NewReader(nil)
	return &decoder{r: r, dec: jsontext.NewDecoder(r)}
}}

// decoder is a pooled decoder and its reader.
type decoder struct {
	r   *bytes.Reader
	dec *jsontext.Decoder
}

// borrow is a decoder of the pool, reading raw with opts.
func borrow(raw []byte, opts ...jsontext.Options) *decoder {
	d := decoders.Get().(*decoder)
	d.r.Reset(raw)
	d.dec.Reset(d.r, opts...)
	return d
}

// giveBack returns d to the pool, which keeps no request's body.
func (d *decoder) giveBack() {
	d.r.Reset(nil)
	d.dec.Reset(d.r)
	decoders.Put(d)
}
