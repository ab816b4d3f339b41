package web

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// DNS rebinding: a page on attacker.example makes its own name resolve to 127.0.0.1, and the
// browser then lets that page read this server as same-origin. The one thing it cannot forge is
// the name: its requests carry Host: attacker.example. So the server answers only requests that
// name it by an IP address, localhost or a name the operator allowed (Options.AllowedHosts), the
// rule Jupyter's and Vite's development servers apply. API calls also refuse an Origin, or a
// Sec-Fetch-Site, that says another site made them: the page itself fetches same-origin.

// checkOrigin returns why r is refused, or "" to serve it.
func (s *Server) checkOrigin(r *http.Request) string {
	if !s.allowedHost(r.Host) {
		return fmt.Sprintf("Host %q is not a name of this server (it answers to localhost and IP addresses; gpusim serve --allow-host NAME adds a name)", r.Host)
	}
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		return ""
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		return fmt.Sprintf("a request from another site (Sec-Fetch-Site: %s): the API serves this page only", site)
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || !strings.EqualFold(u.Host, r.Host) {
			return fmt.Sprintf("Origin %q is not this server's page: the API serves this page only", o)
		}
	}
	return ""
}

// allowedHost reports whether a Host header names this server: an IP literal, localhost, or an
// allowed name, with or without a port.
func (s *Server) allowedHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" {
		return false
	}
	if net.ParseIP(host) != nil {
		return true
	}
	return s.hosts[host]
}
