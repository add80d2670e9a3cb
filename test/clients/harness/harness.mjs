// Drives Herald's Mastodon-compatible client API with megalodon, a client
// library no one here wrote, as an app would: register, sign in through the
// authorization page (its forms posted as a browser posts them), then call
// the API. Run by test/clients/clients_test.go; prints one JSON line of what
// it saw, exits 1 on the first failure.
import generator from 'megalodon'
import { check, signIn } from './signin.mjs'

const base = process.env.HERALD_URL
const user = process.env.HERALD_USER
const password = process.env.HERALD_PASSWORD
const persona = process.env.HERALD_PERSONA
// A remote actor the test made mention the persona before the harness
// runs, and the text of its note.
const mentionedBy = process.env.HERALD_MENTIONED_BY
const mentionText = process.env.HERALD_MENTION_TEXT
const seen = {}

async function main() {
  // The authorization page, walked as a browser walks it.
  const { token, app } = await signIn(base, user, password, persona)
  seen.app = app.name
  const client = generator('mastodon', base, token)

  const appCheck = await client.verifyAppCredentials()
  check(appCheck.data.name === 'Herald harness', 'verifyAppCredentials names the app')

  const me = (await client.verifyAccountCredentials()).data
  check(me.username === persona, 'the token acts as ' + persona + ', not ' + me.username)
  seen.account = me.acct

  // The remote actor's mention, as a notification.
  const notes = (await client.getNotifications({ limit: 20 })).data
  const mention = notes.find(n => n.type === 'mention')
  check(notes.length === 1 && mention, 'one mention notification: ' + JSON.stringify(notes.map(n => n.type)))
  check(mention.account.url === mentionedBy && mention.account.acct.startsWith('bob@'), 'the mention is by ' + mentionedBy + ': ' + mention.account.acct)
  check(mention.status && mention.status.uri.startsWith(mentionedBy) && mention.status.content.includes(mentionText), 'the mention carries its status')
  const one = (await client.getNotification(mention.id)).data
  check(one.id === mention.id && one.type === 'mention', 'getNotification')
  const follows = (await client.getNotifications({ exclude_types: ['mention'] })).data
  check(follows.length === 0, 'exclude_types leaves no notification: ' + follows.length)
  await client.dismissNotification(mention.id)
  check((await client.getNotifications()).data.length === 0, 'dismissNotification')
  seen.notification = mention.type + ' by ' + mention.account.acct

  const instance = (await client.getInstance()).data
  check(instance.uri && instance.version, 'getInstance')
  seen.instance = instance.uri

  // The user stream (WebSocket, at the instance's streaming_api) tells
  // of the status posted next.
  const stream = await client.userStreaming()
  await new Promise((resolve, reject) => { stream.once('connect', resolve); stream.once('error', reject) })
  const streamed = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no update on the user stream in 15 s')), 15000)
    stream.on('update', s => { clearTimeout(timer); resolve(s) })
    stream.on('error', e => { clearTimeout(timer); reject(e) })
  })
  streamed.catch(() => {}) // awaited below; this keeps an early error from being unhandled
  const status = (await client.postStatus('Hello from megalodon', { visibility: 'public' })).data
  check(status.id && status.account.username === persona, 'postStatus as ' + persona)
  const update = await streamed
  check(update.id === status.id, 'the user stream sent the posted status: ' + update.id)
  stream.stop()
  seen.streamed = update.id
  check(status.content.includes('Hello from megalodon'), 'the status text: ' + status.content)
  seen.posted = status.id

  const again = (await client.getStatus(status.id)).data
  check(again.id === status.id, 'getStatus')

  const mine = (await client.getAccountStatuses(me.id)).data
  check(mine.some(s => s.id === status.id), 'getAccountStatuses lists the status')
  seen.account_statuses = mine.length

  // A content warning and a poll.
  const polled = (await client.postStatus('Which one?', {
    spoiler_text: 'a poll', sensitive: true, language: 'en', visibility: 'public',
    poll: { options: ['tea', 'coffee'], expires_in: 3600, multiple: false },
  })).data
  check(polled.spoiler_text === 'a poll' && polled.sensitive === true, 'the content warning: ' + JSON.stringify(polled.spoiler_text))
  check(polled.poll && polled.poll.options.length === 2 && polled.poll.options[1].title === 'coffee', 'the poll: ' + JSON.stringify(polled.poll))
  check(polled.language === 'en', 'the language: ' + polled.language)
  seen.poll = polled.poll.id

  const home = await client.getHomeTimeline({ limit: 1 })
  check(home.data.length === 1 && home.data[0].id === polled.id, 'getHomeTimeline starts with the newest status')
  check((home.headers.link || '').includes('max_id=' + polled.id), 'the home timeline links its next page: ' + home.headers.link)
  const older = (await client.getHomeTimeline({ max_id: polled.id })).data
  check(older.some(s => s.id === status.id), 'the next page of the home timeline has the first status')
  seen.home = home.data.length + older.length

  const faved = (await client.favouriteStatus(polled.id)).data
  check(faved.favourited === true && faved.favourites_count === 1, 'favouriteStatus: ' + faved.favourited + ' ' + faved.favourites_count)
  const boosted = (await client.reblogStatus(polled.id)).data
  check(boosted.reblog && boosted.reblog.id === polled.id && boosted.reblogged === true, 'reblogStatus wraps the status')
  const both = (await client.getStatus(polled.id)).data
  check(both.favourited && both.reblogged, 'getStatus says favourited and reblogged')
  const unboosted = (await client.unreblogStatus(polled.id)).data
  const unfaved = (await client.unfavouriteStatus(polled.id)).data
  check(!unboosted.reblogged && !unfaved.favourited && unfaved.favourites_count === 0, 'unreblogStatus and unfavouriteStatus')
  seen.favourited_and_reblogged = true

  const looked = (await client.lookupAccount(persona)).data
  check(looked.id === me.id, 'lookupAccount')

  // A remote account (a fake server the Go test runs): found by search
  // with resolve (WebFinger, then its actor, through Herald), followed,
  // and the relationship read back.
  const remoteAcct = process.env.HERALD_REMOTE_ACCT
  const found = (await client.search('@' + remoteAcct, { type: 'accounts', resolve: true })).data
  check(found.accounts.length === 1 && found.accounts[0].acct === remoteAcct, 'search resolved ' + remoteAcct + ': ' + JSON.stringify(found.accounts))
  const remote = found.accounts[0]
  check(remote.url === process.env.HERALD_REMOTE_URI, 'the account is the remote actor: ' + remote.url)
  seen.searched = remote.acct
  const followed = (await client.followAccount(remote.id)).data
  check(followed.id === remote.id && followed.requested && !followed.following, 'followAccount: requested until the remote accepts')
  const rels = (await client.getRelationships([remote.id, me.id])).data
  const rel = rels.find(r => r.id === remote.id)
  check(rels.length === 2 && rel && rel.requested && !rel.blocking && !rel.muting, 'getRelationships: ' + JSON.stringify(rels))
  seen.relationship = { requested: rel.requested, following: rel.following }
  const known = (await client.searchAccount(remoteAcct)).data
  check(known.length === 1 && known[0].id === remote.id, 'searchAccount finds the account Herald now holds, by the same id')
  const muted = (await client.muteAccount(remote.id, true)).data
  check(muted.muting && muted.requested, 'muteAccount keeps the follow request')
  check((await client.getMutes()).data.some(a => a.id === remote.id), 'getMutes lists it')
  check(!(await client.unmuteAccount(remote.id)).data.muting, 'unmuteAccount')

  await client.deleteStatus(status.id)
  let gone = false
  try {
    await client.getStatus(status.id)
  } catch (e) {
    gone = e.response && e.response.status === 404
  }
  check(gone, 'the deleted status is gone')

  await generator('mastodon', base).revokeToken(app.client_id, app.client_secret, token)
  let revoked = false
  try {
    await client.verifyAccountCredentials()
  } catch (e) {
    revoked = e.response && e.response.status === 401
  }
  check(revoked, 'the revoked token is refused')
  seen.ok = true
}

main().then(() => {
  console.log(JSON.stringify(seen))
}).catch(e => {
  const detail = e.response ? ` (HTTP ${e.response.status} ${JSON.stringify(e.response.data)})` : ''
  console.log(JSON.stringify(seen))
  console.error('harness failed: ' + e.message + detail)
  process.exit(1)
})
