module workbench/scripts/proxy-models

go 1.26.0

require github.com/valyala/fasthttp v1.79.0

require (
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/molecule-man/go-brrr v1.3.1 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
)
