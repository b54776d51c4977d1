import Foundation
import Grove
import GroveRuntime
import GroveTesting
import Testing

@Suite("Statecharts: nested and parallel states compiled to step", .timeLimit(.minutes(2)))
struct StatechartTests {
    /// A Wizard store past its start, in `open.form.name` after `open`, outputs asserted.
    private func openWizard() async -> TestStore<Wizard> {
        let store = TestStore(Wizard.self)
        await store.receiveOutput(.entered("closed"))
        await store.send(.open) { $0 = .open(.form(.name(""))) }
        for output: Wizard.Output in [.left("closed"), .did("open"), .entered("open"), .entered("open.form"),
                                      .entered("open.form.name")] {
            await store.receiveOutput(output)
        }
        return store
    }

    @Test("The key is the active path; a parallel state's key has one path per region")
    func keyIsTheActivePath() {
        #expect(Wizard.stateKey(.closed) == "closed")
        #expect(Wizard.stateKey(.open(.form(.address("x")))) == "open.form.address")
        #expect(Wizard.stateKey(.open(.review)) == "open.review")
        #expect(Media.stateKey(.on(.playing, .muted)) == "on.playback.playing|on.volume.muted")
        #expect(Wizard.path(of: .address) == [.open, .form, .address])
        #expect(Media.activeNodes(.on(.paused, .loud)) == [.on, .playback, .paused, .volume, .loud])
    }

    @Test("A parent handles what its active child does not; the child's own handler wins when it has one")
    func parentHandlesWhatTheChildDoesNot() async {
        let store = await openWizard()
        // `name` has no `ping`: its parent `form` takes it, and `open` never sees it.
        await store.send(.ping)
        await store.receiveOutput(.did("form ping"))
        await store.send(.next) { $0 = .open(.form(.address(""))) }
        await store.send(.next) { $0 = .open(.review) }
        for output: Wizard.Output in [.left("open.form.name"), .did("next"), .entered("open.form.address"),
                                      .left("open.form.address"), .left("open.form"), .did("next"), .entered("open.review")] {
            await store.receiveOutput(output)
        }
        // `review` is not in `form`: `open` takes the ping.
        await store.send(.ping)
        await store.receiveOutput(.did("open ping"))
        // Nobody on the path handles `back` in `review`: unhandled, and nothing changes.
        await store.sendUnhandled(.back)
        await store.send(.close) { $0 = .closed }
        for output: Wizard.Output in [.left("open.review"), .left("open"), .did("close"), .entered("closed")] {
            await store.receiveOutput(output)
        }
        await store.finish()
    }

    @Test("Leaving a subtree exits innermost first, entering one enters outermost first, around the transition")
    func subtreeOrder() async {
        let store = await openWizard()   // asserts entering: open, open.form, open.form.name
        await store.send(.next) { $0 = .open(.form(.address(""))) }
        for output: Wizard.Output in [.left("open.form.name"), .did("next"), .entered("open.form.address")] {
            await store.receiveOutput(output)
        }
        // `close`, handled by `open` from three levels down, leaves all three.
        await store.send(.close) { $0 = .closed }
        for output: Wizard.Output in [.left("open.form.address"), .left("open.form"), .left("open"), .did("close"),
                                      .entered("closed")] {
            await store.receiveOutput(output)
        }
        await store.finish()
    }

    @Test("A move between two children of one parent runs only the children's exit and enter")
    func siblingsOnly() {
        var state = Wizard.State.open(.form(.name("ada")))
        let effect = Wizard.step(&state, event: .next)
        #expect(state == .open(.form(.address(""))))
        #expect(effect.shape.flattened == [
            .cancel(.stateTimeout), .cancel(.stateTimeout(level: "open.form.name")),
            .output(Wizard.Output.left("open.form.name")), .output(.did("next")), .output(.entered("open.form.address")),
        ] as [EffectShape<Wizard>])
    }

    @Test("A self-transition of a leaf that keeps its key runs no exit or enter")
    func selfTransitionRunsNone() async {
        let store = await openWizard()
        await store.send(.type("ada")) { $0 = .open(.form(.name("ada"))) }
        await store.receiveOutput(.did("type"))
        var state = Wizard.State.open(.form(.name("a")))
        #expect(Wizard.step(&state, event: .type("ab")).shape == .output(.did("type")))
        await store.send(.close) { $0 = .closed }
        for output: Wizard.Output in [.left("open.form.name"), .left("open.form"), .left("open"), .did("close"),
                                      .entered("closed")] {
            await store.receiveOutput(output)
        }
        await store.finish()
    }

    @Test("A state timeout of a parent level survives moves between its children and fires there")
    func parentTimeoutSurvivesChildMoves() async {
        let store = await openWizard()
        await store.advance(by: .seconds(5))
        await store.send(.next) { $0 = .open(.form(.address(""))) }
        await store.send(.back) { $0 = .open(.form(.name(""))) }
        await store.send(.next) { $0 = .open(.form(.address(""))) }
        for output: Wizard.Output in [.left("open.form.name"), .did("next"), .entered("open.form.address"),
                                      .left("open.form.address"), .did("back"), .entered("open.form.name"),
                                      .left("open.form.name"), .did("next"), .entered("open.form.address")] {
            await store.receiveOutput(output)
        }
        // 60 s after `form` was entered, whatever its children did since.
        await store.advance(by: .seconds(55))
        await store.receive(.expired) { $0 = .closed }
        for output: Wizard.Output in [.left("open.form.address"), .left("open.form"), .left("open"), .did("form expired"),
                                      .entered("closed")] {
            await store.receiveOutput(output)
        }
        await store.finish()
    }

    @Test("Leaving the level cancels its state timeout; a leaf's plain state timeout ends with the leaf")
    func leavingTheLevelCancelsIt() async {
        let store = await openWizard()
        await store.send(.next) { $0 = .open(.form(.address(""))) }
        await store.send(.next) { $0 = .open(.review) }
        for output: Wizard.Output in [.left("open.form.name"), .did("next"), .entered("open.form.address"),
                                      .left("open.form.address"), .left("open.form"), .did("next"), .entered("open.review")] {
            await store.receiveOutput(output)
        }
        // Neither `name`'s ten seconds nor `form`'s minute fire in `review`.
        await store.advance(by: .seconds(120))
        #expect(await store.host.inFlightEffects.isEmpty)
        await store.send(.close) { $0 = .closed }
        for output: Wizard.Output in [.left("open.review"), .left("open"), .did("close"), .entered("closed")] {
            await store.receiveOutput(output)
        }
        await store.finish()
    }

    @Test("A leaf's plain state timeout fires while it stays")
    func leafTimeoutFires() async {
        let store = await openWizard()
        await store.send(.type("a")) { $0 = .open(.form(.name("a"))) }
        await store.advance(by: .seconds(10))
        await store.receive(.hurry)
        await store.receiveOutput(.did("type"))
        await store.receiveOutput(.did("hurry"))
        await store.send(.close) { $0 = .closed }
        for output: Wizard.Output in [.left("open.form.name"), .left("open.form"), .left("open"), .did("close"),
                                      .entered("closed")] {
            await store.receiveOutput(output)
        }
        await store.finish()
    }

    @Test("A level's state timeout has an id Grove reserves, coded apart from the plain one and from user ids")
    func levelTimeoutID() throws {
        let id = EffectID.stateTimeout(level: "open.form")
        #expect(id != .stateTimeout && id != EffectID("<state-timeout/open.form>"))
        #expect(id.isReserved && id.stateTimeoutLevel == "open.form")
        let coded = try JSONEncoder().encode(id)
        #expect(String(decoding: coded, as: UTF8.self) == #"{"reserved":"state-timeout\/open.form"}"#)
        #expect(try JSONDecoder().decode(EffectID.self, from: coded) == id)
    }

    @Test("Postpone follows the key: held across moves inside the parent, delivered again on each change")
    func postponeFollowsTheKey() async {
        let store = await openWizard()
        await store.send(.submit)   // `form` postpones it
        #expect(await store.host.postponedEvents == [.submit])
        await store.send(.next) { $0 = .open(.form(.address(""))) }
        await store.receive(.submit)   // the key changed: delivered again, postponed again by `form`
        #expect(await store.host.postponedEvents == [.submit])
        await store.send(.next) { $0 = .open(.review) }
        await store.receive(.submit) { $0 = .closed }
        for output: Wizard.Output in [.left("open.form.name"), .did("next"), .entered("open.form.address"),
                                      .left("open.form.address"), .left("open.form"), .did("next"), .entered("open.review"),
                                      .left("open.review"), .left("open"), .did("submit"), .entered("closed")] {
            await store.receiveOutput(output)
        }
        await store.finish()
    }

    @Test("The initial state's nodes are entered outermost first when the machine starts")
    func startEntersThePath() async {
        let store = TestStore(Wizard.self, initialState: .open(.form(.address("x"))))
        for output: Wizard.Output in [.entered("open"), .entered("open.form"), .entered("open.form.address")] {
            await store.receiveOutput(output)
        }
        await store.send(.close) { $0 = .closed }
        for output: Wizard.Output in [.left("open.form.address"), .left("open.form"), .left("open"), .did("close"),
                                      .entered("closed")] {
            await store.receiveOutput(output)
        }
        await store.finish()
    }

    // MARK: Parallel regions

    /// A Media store past its start and `power`, in `on` with both regions entered.
    private func poweredMedia() async -> TestStore<Media> {
        let store = TestStore(Media.self)
        await store.receiveOutput(.entered("off"))
        await store.send(.power) { $0 = .on(.paused, .loud) }
        for output: Media.Output in [.left("off"), .did("power on"), .entered("on"), .entered("on.playback"),
                                     .entered("on.playback.paused"), .entered("on.volume"), .entered("on.volume.loud")] {
            await store.receiveOutput(output)
        }
        return store
    }

    @Test("A region moves alone: only its leaf exits and enters, the other region is untouched")
    func regionMovesAlone() async {
        let store = await poweredMedia()
        await store.send(.toggle) { $0 = .on(.playing, .loud) }
        for output: Media.Output in [.left("on.playback.paused"), .did("toggle"), .entered("on.playback.playing")] {
            await store.receiveOutput(output)
        }
        await store.send(.mute) { $0 = .on(.playing, .muted) }
        for output: Media.Output in [.left("on.volume.loud"), .did("mute"), .entered("on.volume.muted")] {
            await store.receiveOutput(output)
        }
        await store.finish()
    }

    @Test("Every region that handles an event does; the parallel node gets it only when none does")
    func everyRegionHandles() async {
        let store = await poweredMedia()
        await store.send(.toggle) { $0 = .on(.playing, .loud) }
        await store.send(.mute) { $0 = .on(.playing, .muted) }
        await store.send(.reset) { $0 = .on(.paused, .loud) }
        await store.send(.ping)
        for output: Media.Output in [.left("on.playback.paused"), .did("toggle"), .entered("on.playback.playing"),
                                     .left("on.volume.loud"), .did("mute"), .entered("on.volume.muted"),
                                     .left("on.volume.muted"), .left("on.playback.playing"),
                                     .did("playback reset"), .did("volume reset"),
                                     .entered("on.playback.paused"), .entered("on.volume.loud"),
                                     .did("on ping")] {
            await store.receiveOutput(output)
        }
        await store.finish()
    }

    @Test("Leaving a parallel state exits every region, innermost and last region first, then the node")
    func leavingAParallelState() async {
        let store = await poweredMedia()
        await store.send(.power) { $0 = .off }
        for output: Media.Output in [.left("on.volume.loud"), .left("on.volume"), .left("on.playback.paused"),
                                     .left("on.playback"), .left("on"), .did("power off"), .entered("off")] {
            await store.receiveOutput(output)
        }
        await store.sendUnhandled(.mute)
        await store.finish()
    }
}
