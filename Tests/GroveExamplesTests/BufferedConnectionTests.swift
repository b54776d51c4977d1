import Grove
import GroveExamples
import GroveTesting
import Testing

/// A state timeout, an enter action and postpone together: sends wait until the link is up,
/// connecting gives up after 5 s and tries again after a second, three times.
@Suite("BufferedConnection", .timeLimit(.minutes(2)))
struct BufferedConnectionTests {
    @Test("sends before the link is up wait, and go out in the order they came once it is")
    func sendsWaitForTheLink() async {
        let store = TestStore(BufferedConnection.self)
        await store.send(.send("a"))
        await store.send(.connect) { $0 = .connecting(attempt: 1) }
        // Delivered again on entering connecting, and postponed again there.
        await store.receive(.send("a"))
        await store.send(.send("b"))
        await store.send(.linkUp) { $0 = .online(sent: []) }
        await store.receive(.send("a")) { $0 = .online(sent: ["a"]) }
        await store.receive(.send("b")) { $0 = .online(sent: ["a", "b"]) }
        await store.send(.send("c")) { $0 = .online(sent: ["a", "b", "c"]) }
        await store.finish()
    }

    @Test("connecting gives up after 5 s, waits a second and dials again; the third time it goes offline")
    func dialsThreeTimes() async {
        let store = TestStore(BufferedConnection.self)
        await store.send(.connect) { $0 = .connecting(attempt: 1) }
        for attempt in 1 ..< BufferedConnection.attempts {
            await store.advance(by: BufferedConnection.dialTimeout)
            await store.receive(.dialTimedOut) { $0 = .backingOff(attempt: attempt) }
            await store.advance(by: BufferedConnection.backoff)
            await store.receive(.retry) { $0 = .connecting(attempt: attempt + 1) }
        }
        await store.advance(by: BufferedConnection.dialTimeout)
        await store.receive(.dialTimedOut) { $0 = .offline }
        await store.finish()
    }

    @Test("the link coming up ends the dial's timeout; losing it dials again, with a timeout of its own")
    func linkUpEndsTheTimeout() async {
        let store = TestStore(BufferedConnection.self)
        await store.send(.connect) { $0 = .connecting(attempt: 1) }
        await store.advance(by: .seconds(4))
        await store.send(.linkUp) { $0 = .online(sent: []) }
        await store.advance(by: .seconds(60))
        await store.send(.linkDown) { $0 = .connecting(attempt: 1) }
        await store.send(.send("later"))
        await store.advance(by: BufferedConnection.dialTimeout)
        await store.receive(.dialTimedOut) { $0 = .backingOff(attempt: 1) }
        await store.receive(.send("later"))
        await store.advance(by: BufferedConnection.backoff)
        await store.receive(.retry) { $0 = .connecting(attempt: 2) }
        await store.receive(.send("later"))
        await store.send(.linkUp) { $0 = .online(sent: []) }
        await store.receive(.send("later")) { $0 = .online(sent: ["later"]) }
        await store.finish()
    }
}
