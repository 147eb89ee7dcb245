package main

// A binding for the few OpenGL 1.1 calls this program makes. A full binding
// (github.com/go-gl/gl) takes minutes to compile with cgo; these take
// seconds.

/*
#cgo linux LDFLAGS: -lGL
#cgo darwin CFLAGS: -DGL_SILENCE_DEPRECATION
#cgo darwin LDFLAGS: -framework OpenGL
#cgo windows LDFLAGS: -lopengl32
#ifdef __APPLE__
#include <OpenGL/gl.h>
#else
#ifdef _WIN32
#include <windows.h>
#endif
#include <GL/gl.h>
#endif

// The calls that take or return bytes, typed so that Go passes a byte
// slice's first element, and reads the renderer's name, without package
// unsafe.
static void texImage(GLsizei size, const unsigned char *pix) {
	glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, size, size, 0, GL_RGBA, GL_UNSIGNED_BYTE, pix);
}
static void texSubImage(GLint x, GLint y, GLsizei w, GLsizei h, const unsigned char *pix) {
	glTexSubImage2D(GL_TEXTURE_2D, 0, x, y, w, h, GL_RGBA, GL_UNSIGNED_BYTE, pix);
}
static void readPixels(GLsizei w, GLsizei h, unsigned char *pix) {
	glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, pix);
}
static const char *renderer(void) {
	return (const char *)glGetString(GL_RENDERER);
}
*/
import "C"

import (
	"fmt"
	"math"
)

// newTexture makes an RGBA texture of size×size texels filled with fill,
// drawn without filtering, and returns its name.
func newTexture(size int, fill []byte) uint32 {
	var tex C.GLuint
	C.glGenTextures(1, &tex)
	C.glBindTexture(C.GL_TEXTURE_2D, tex)
	C.glTexParameteri(C.GL_TEXTURE_2D, C.GL_TEXTURE_MIN_FILTER, C.GL_NEAREST)
	C.glTexParameteri(C.GL_TEXTURE_2D, C.GL_TEXTURE_MAG_FILTER, C.GL_NEAREST)
	C.glPixelStorei(C.GL_UNPACK_ALIGNMENT, 1)
	C.texImage(C.GLsizei(size), (*C.uchar)(&fill[0]))
	return uint32(tex)
}

// uploadTile copies pix, a w×h RGBA block, into texture tex at (x, y).
func uploadTile(tex uint32, x, y, w, h int, pix []byte) {
	C.glBindTexture(C.GL_TEXTURE_2D, C.GLuint(tex))
	C.texSubImage(C.GLint(x), C.GLint(y), C.GLsizei(w), C.GLsizei(h), (*C.uchar)(&pix[0]))
}

// drawTexture fills a w×h viewport with texture tex, texel for pixel.
// Texture row 0 is the top of the window, as in an image.Image; glReadPixels
// counts rows from the bottom.
func drawTexture(tex uint32, w, h int) {
	C.glViewport(0, 0, C.GLsizei(w), C.GLsizei(h))
	C.glClearColor(0.1, 0.1, 0.1, 1)
	C.glClear(C.GL_COLOR_BUFFER_BIT)
	C.glEnable(C.GL_TEXTURE_2D)
	C.glBindTexture(C.GL_TEXTURE_2D, C.GLuint(tex))
	C.glColor4f(1, 1, 1, 1)
	C.glBegin(C.GL_QUADS)
	C.glTexCoord2f(0, 1)
	C.glVertex2f(-1, -1)
	C.glTexCoord2f(1, 1)
	C.glVertex2f(1, -1)
	C.glTexCoord2f(1, 0)
	C.glVertex2f(1, 1)
	C.glTexCoord2f(0, 0)
	C.glVertex2f(-1, 1)
	C.glEnd()
	C.glDisable(C.GL_TEXTURE_2D)
}

// drawSquare draws a filled square of the given side, in pixels, centred
// on (cx, cy) (counted from the top left) and turned by angle radians, in
// colour c, in a w×h viewport.
func drawSquare(w, h int, cx, cy, side, angle float64, c [3]uint8) {
	C.glColor4ub(C.GLubyte(c[0]), C.GLubyte(c[1]), C.GLubyte(c[2]), 255)
	C.glBegin(C.GL_QUADS)
	for k := range 4 {
		a := angle + float64(k)*math.Pi/2 + math.Pi/4
		x := cx + side/math.Sqrt2*math.Cos(a)
		y := cy + side/math.Sqrt2*math.Sin(a)
		C.glVertex2f(C.GLfloat(2*x/float64(w)-1), C.GLfloat(1-2*y/float64(h)))
	}
	C.glEnd()
	C.glColor4f(1, 1, 1, 1)
}

// finish waits until OpenGL has done every command given so far.
func finish() { C.glFinish() }

// readPixels returns the w×h RGBA pixels of the back buffer, bottom row
// first.
func readPixels(w, h int) []byte {
	pix := make([]byte, 4*w*h)
	C.glFinish()
	C.glReadBuffer(C.GL_BACK)
	C.glPixelStorei(C.GL_PACK_ALIGNMENT, 1)
	C.readPixels(C.GLsizei(w), C.GLsizei(h), (*C.uchar)(&pix[0]))
	return pix
}

// glError returns the pending OpenGL error, if any.
func glError() error {
	if e := C.glGetError(); e != C.GL_NO_ERROR {
		return fmt.Errorf("OpenGL error 0x%x", uint32(e))
	}
	return nil
}

// glRenderer names the OpenGL implementation.
func glRenderer() string {
	return C.GoString(C.renderer())
}
