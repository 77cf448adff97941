package views

import "context"

type assetsKey struct{}

// WithAssets returns ctx carrying url, which gives the address of a static
// file (lab.css) with its content's hash, so that browsers may cache it.
func WithAssets(ctx context.Context, url func(name string) string) context.Context {
	return context.WithValue(ctx, assetsKey{}, url)
}

// Asset is the address of the static file name: hashed when ctx carries
// the addresses (WithAssets), /static/name when it does not.
func Asset(ctx context.Context, name string) string {
	if url, ok := ctx.Value(assetsKey{}).(func(string) string); ok {
		return url(name)
	}
	return "/static/" + name
}
