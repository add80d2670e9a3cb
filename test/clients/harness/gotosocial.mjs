// Drives Herald's Mastodon-compatible client API with megalodon against a
// real GoToSocial: run by test/interop/clients_test.go one step at a time
// (HERALD_STEP), the Go test acting as the GoToSocial account between the
// steps. Each step prints one JSON line of what it saw and exits 1 on the
// first failure.
import generator from 'megalodon'
import { check, signIn } from './signin.mjs'

const env = process.env
const base = env.HERALD_URL
const remoteAcct = env.HERALD_REMOTE_ACCT // the GoToSocial account, user@host
const seen = {}

// until polls find (an async function answering a value or nothing) for up
// to 60 s: Herald and GoToSocial deliver asynchronously.
async function until(what, find) {
  const deadline = Date.now() + 60_000
  for (;;) {
    const v = await find()
    if (v) return v
    if (Date.now() > deadline) throw new Error('timed out waiting for ' + what)
    await new Promise(r => setTimeout(r, 500))
  }
}

const steps = {
  // Sign in through the authorization-code flow, find the GoToSocial
  // account by search (resolve: WebFinger and its actor, through Herald),
  // follow it, and read the relationship until GoToSocial has accepted.
  async follow() {
    const { token } = await signIn(base, env.HERALD_USER, env.HERALD_PASSWORD, env.HERALD_PERSONA)
    const client = generator('mastodon', base, token)
    const me = (await client.verifyAccountCredentials()).data
    check(me.username === env.HERALD_PERSONA, 'the token acts as ' + env.HERALD_PERSONA + ', not ' + me.username)
    const found = (await client.search('@' + remoteAcct, { type: 'accounts', resolve: true })).data
    check(found.accounts.length === 1 && found.accounts[0].acct === remoteAcct, 'search resolved ' + remoteAcct + ': ' + JSON.stringify(found.accounts))
    const remote = found.accounts[0]
    check(remote.url.startsWith(env.HERALD_REMOTE_BASE + '/'), 'the account is on GoToSocial: ' + remote.url)
    const followed = (await client.followAccount(remote.id)).data
    check(followed.id === remote.id && (followed.requested || followed.following), 'followAccount: ' + JSON.stringify(followed))
    const rel = await until('GoToSocial to accept the follow', async () => {
      const rels = (await client.getRelationships([remote.id])).data
      return rels.length === 1 && rels[0].following && !rels[0].requested ? rels[0] : null
    })
    Object.assign(seen, { token, me: me.id, remote: remote.id, following: rel.following })
  },

  // Read the GoToSocial account's post in the home timeline, favourite and
  // reblog it.
  async react() {
    const client = generator('mastodon', base, env.HERALD_TOKEN)
    const st = await until('the GoToSocial post in the home timeline', async () =>
      (await client.getHomeTimeline({ limit: 40 })).data.find(s => s.content.includes(env.HERALD_TEXT) && s.account.acct === remoteAcct))
    const faved = (await client.favouriteStatus(st.id)).data
    check(faved.id === st.id && faved.favourited, 'favouriteStatus: ' + JSON.stringify({ id: faved.id, favourited: faved.favourited }))
    const boost = (await client.reblogStatus(st.id)).data
    check(boost.reblog && boost.reblog.id === st.id && boost.reblog.reblogged, 'reblogStatus wraps the status, reblogged: ' + JSON.stringify({ id: boost.id, reblog: boost.reblog && boost.reblog.id }))
    const again = (await client.getStatus(st.id)).data
    check(again.favourited && again.reblogged, 'getStatus: favourited and reblogged')
    Object.assign(seen, { status: st.id, uri: st.uri, boost: boost.id })
  },

  // Post with a content warning and a poll, and read it back at the top of
  // the home timeline.
  async post() {
    const client = generator('mastodon', base, env.HERALD_TOKEN)
    const st = (await client.postStatus(env.HERALD_TEXT, {
      visibility: 'public', spoiler_text: env.HERALD_SPOILER, poll: { options: ['yes', 'no'], expires_in: 3600 },
    })).data
    check(st.id && st.spoiler_text === env.HERALD_SPOILER, 'postStatus keeps the content warning: ' + st.spoiler_text)
    check(st.poll && st.poll.options.map(o => o.title).join() === 'yes,no' && !st.poll.expired, 'postStatus keeps the poll: ' + JSON.stringify(st.poll))
    await until('the post in the home timeline', async () =>
      (await client.getHomeTimeline({ limit: 40 })).data.some(s => s.id === st.id && s.spoiler_text === env.HERALD_SPOILER))
    Object.assign(seen, { status: st.id, uri: st.uri })
  },

  // The GoToSocial account's reply to that post arrives as a mention
  // notification, and in the post's thread.
  async notified() {
    const client = generator('mastodon', base, env.HERALD_TOKEN)
    const n = await until('the reply as a notification', async () =>
      (await client.getNotifications({ limit: 40 })).data.find(n => n.type === 'mention' && n.status && n.status.content.includes(env.HERALD_TEXT)))
    check(n.account.acct === remoteAcct, 'the notification is from ' + remoteAcct + ': ' + n.account.acct)
    check(n.status.in_reply_to_id === env.HERALD_STATUS, 'the notified status replies to ' + env.HERALD_STATUS + ': ' + n.status.in_reply_to_id)
    const one = (await client.getNotification(n.id)).data
    check(one.id === n.id && one.status.id === n.status.id, 'getNotification')
    const thread = (await client.getStatusContext(env.HERALD_STATUS)).data
    check(thread.descendants.some(s => s.id === n.status.id), 'the reply is in the thread: ' + thread.descendants.map(s => s.id))
    Object.assign(seen, { notification: n.id, reply: n.status.id })
  },
}

const step = steps[env.HERALD_STEP]
if (!step) {
  console.error('HERALD_STEP names no step: ' + env.HERALD_STEP)
  process.exit(2)
}
step().then(() => {
  seen.ok = true
  console.log(JSON.stringify(seen))
}).catch(e => {
  const detail = e.response ? ` (HTTP ${e.response.status} ${JSON.stringify(e.response.data)})` : ''
  console.log(JSON.stringify(seen))
  console.error('harness failed: ' + e.message + detail)
  process.exit(1)
})
