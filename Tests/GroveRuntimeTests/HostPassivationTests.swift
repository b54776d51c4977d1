import Grove
import GroveRuntime
import Testing

/// `passivate()` closes an empty mailbox as the host's release would, so that its deinit skips
/// that: later sends are refused as released, later reads answered with the state it left in,
/// and nothing is answered twice. A mailbox holding events is left for the release to settle.
@Suite("Host passivation", .timeLimit(.minutes(2)))
struct HostPassivationTests {
    @Test func aPassivatedHostRefusesLaterSendsAsReleasedAndItsReleaseAnswersNothingMore() async throws {
        let answers = HostReplyTokenTests.Answers()
        var host: MachineHost<Probe>? = HostReplyTokenTests.host(answers)
        host?.start()
        try host?.send(.note("a"), replyToken: 1)
        await host?.flush()
        await host?.passivate()
        var refusal: HostError?
        do {
            try host?.send(.note("b"), replyToken: 2)
        } catch {
            refusal = error
        }
        #expect(refusal?.code == .hostReleased)
        let state = await withCheckedContinuation { continuation in
            host?.requestState { continuation.resume(returning: $0) }
        }
        #expect(state.log == ["a"])
        host = nil
        #expect(answers.tokens == [1])
        #expect(answers.errors == [nil])
    }

    @Test func aHostPassivatedWithAnEventQueuedLeavesItForItsReleaseToAnswer() async throws {
        let answers = HostReplyTokenTests.Answers()
        var host: MachineHost<Probe>? = HostReplyTokenTests.host(answers)
        try host?.send(.note("a"), replyToken: 5)  // never started: queued
        await host?.passivate()
        #expect(answers.tokens.isEmpty)
        host = nil
        #expect(answers.tokens == [5])
        #expect(answers.errors == [.hostReleased])
    }

    @Test func aHostThatEndedKeepsItsOutcomeAndLastOutputThroughPassivation() async throws {
        let answers = HostReplyTokenTests.Answers()
        let host = HostReplyTokenTests.host(answers)
        host.start()
        try host.send(.emit("last"), replyToken: 1)
        try host.send(.finish, replyToken: 2)
        await host.flush()
        #expect(await host.hasEnded)
        await host.passivate()
        let termination = try await host.termination()
        #expect(termination.reason == .terminalState)
        #expect(termination.lastOutput == "last")
        #expect(answers.errors == [nil, nil])
    }
}
