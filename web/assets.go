package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"idemlab/api"
	"idemlab/static"
	"idemlab/views"
)

// asset is one file of /static/, read, hashed and compressed once at start.
type asset struct {
	body    []byte
	gz      []byte // gzipped, or nil when that does not pay
	ctype   string
	version string // the first 12 hex digits of the body's SHA-256
}

// assets are the files served under /static/, by path (vendor/htmx.min.js).
type assets map[string]*asset

// embeddedAssets are the embedded static files, read, hashed and
// compressed once per process, however many servers it starts (a test
// starts hundreds): nothing changes them after.
var embeddedAssets = sync.OnceValues(func() (assets, error) { return loadAssets(static.Files) })

// loadAssets reads every file of fsys.
func loadAssets(fsys fs.FS) (assets, error) {
	out := assets{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		a := &asset{body: b, version: hex.EncodeToString(sum[:6]), ctype: mime.TypeByExtension(path.Ext(p))}
		if a.ctype == "" {
			a.ctype = http.DetectContentType(b)
		}
		if len(b) >= 1024 {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			zw.Write(b)
			zw.Close()
			if buf.Len() < len(b)*9/10 {
				a.gz = buf.Bytes()
			}
		}
		out[p] = a
		return nil
	})
	return out, err
}

// url is the address of a static file, with ?v= its content's hash: the
// address changes with the file, so a browser may keep it for a year.
func (a assets) url(name string) string {
	if x := a[name]; x != nil {
		return "/static/" + name + "?v=" + x.version
	}
	return "/static/" + name
}

// withAssets lets the pages link the static files by their hashed addresses.
func (a assets) withAssets(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Path() == api.RouteCharges { // the hot path renders no page: no copy of the request for it
			return next(c)
		}
		r := c.Request()
		c.SetRequest(r.WithContext(views.WithAssets(r.Context(), a.url)))
		return next(c)
	}
}

// handler serves /static/*: under its hashed address a file is cached for a
// year (immutable); under any other it is revalidated each time, and its
// ETag answers a conditional GET with 304. Files go gzipped to clients that
// take it, compressed once at start rather than on every request.
func (a assets) handler() echo.HandlerFunc {
	return func(c echo.Context) error {
		x := a[c.Param("*")]
		if x == nil {
			return echo.ErrNotFound
		}
		h := c.Response().Header()
		addVary(h, "Accept-Encoding")
		if c.QueryParam("v") == x.version {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		body, etag := x.body, `"`+x.version+`"`
		if x.gz != nil && acceptsGzip(c.Request()) {
			body, etag = x.gz, `"`+x.version+`-gz"`
			h.Set(echo.HeaderContentEncoding, "gzip")
		}
		h.Set("ETag", etag)
		h.Set(echo.HeaderContentType, x.ctype)
		http.ServeContent(c.Response(), c.Request(), "", time.Time{}, bytes.NewReader(body))
		return nil
	}
}

// acceptsGzip reports whether the request's Accept-Encoding takes gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(strings.Join(r.Header.Values("Accept-Encoding"), ","), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		if q, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(q, 64); err != nil || f == 0 {
				return false
			}
		}
		return true
	}
	return false
}
