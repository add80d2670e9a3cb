// signIn registers an app with megalodon and walks Herald's authorization
// page as a browser does (sign in, pick the persona, approve), then trades
// the code for a token with the library's own call; returns the token and
// the registered app (its client id and secret revoke the token). Used by
// harness.mjs and gotosocial.mjs.
import generator from 'megalodon'

export function check(cond, what) {
  if (!cond) throw new Error('check failed: ' + what)
}

// formOf reads a page's hidden fields, as a browser submits them.
function formOf(html) {
  const form = new URLSearchParams()
  for (const m of html.matchAll(/<input type="hidden" name="([a-z_]+)" value="([^"]*)">/g)) {
    form.set(m[1], m[2].replaceAll('&amp;', '&').replaceAll('&#34;', '"').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>'))
  }
  return form
}

async function post(url, form) {
  return fetch(url, { method: 'POST', body: form, redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } })
}

export async function signIn(base, user, password, persona) {
  const redirect = 'http://127.0.0.1:1/callback'
  const anon = generator('mastodon', base)
  const app = await anon.registerApp('Herald harness', { scopes: ['read', 'write', 'follow'], redirect_uris: redirect })
  check(app.client_id && app.client_secret && app.url, 'registerApp gave a client and an authorization URL')

  let res = await fetch(app.url, { redirect: 'manual' })
  check(res.status === 200, 'authorization page answered ' + res.status)
  let form = formOf(await res.text())
  form.set('username', user)
  form.set('password', password)
  res = await post(base + '/oauth/authorize', form)
  check(res.status === 200, 'sign-in answered ' + res.status)
  const consent = await res.text()
  check(consent.includes(`value="${persona}"`), 'the consent page offers the persona ' + persona)
  form = formOf(consent)
  form.set('persona', persona)
  form.set('decision', 'approve')
  res = await post(base + '/oauth/authorize', form)
  check(res.status === 302, 'consent answered ' + res.status)
  const location = new URL(res.headers.get('location'))
  check(location.href.startsWith(redirect), 'redirected to the app: ' + location.href)

  const token = await anon.fetchAccessToken(app.client_id, app.client_secret, location.searchParams.get('code'), redirect)
  check(token.access_token, 'a token for the code')
  return { token: token.access_token, app }
}
