// Package docs holds the user guides (Markdown) and the test that keeps
// their relative links and anchors, and the README's, pointing somewhere.
package docs
