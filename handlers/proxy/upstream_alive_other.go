//go:build !unix

package proxy

// alive cannot peek here; a dead connection fails the request instead.
func (c *upConn) alive() bool { return c.br.Buffered() == 0 }
