// Package admin is the operator surface: a JSON API under /admin/api and a
// server-rendered page at /admin (with its moderation view at
// /admin/moderation), all behind the admin token of HERALD_ADMIN_TOKEN.
// The API takes the token as a bearer token; the page takes it once in a
// login form and then keeps an HttpOnly, SameSite=Strict cookie derived
// from it, and protects its forms against cross-site requests. Handlers
// call application.Operator (the queue, the breakers, system names) and
// application.Moderator (domain blocks and allows, registrations,
// reports) and hold no rule of their own. With no token configured nothing
// is registered, so both answer 404.
package admin
