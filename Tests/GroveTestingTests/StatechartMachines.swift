import Grove

/// A form in a dialog, three levels deep: `closed`, or `open` holding either the `form` (its
/// `name` and `address` steps) or the `review`. Every node says, as outputs, when it is entered
/// and left, so a test sees the order. `open` handles `close` and `ping` for all its
/// descendants; `form` handles `ping` first for its own, postpones `submit` until the review, and
/// gives its steps a minute in all (a state timeout of the level `form`); `name` has ten seconds
/// of its own (a plain state timeout: the leaf's).
enum Wizard: Statechart {
    enum State: Equatable, Sendable, Codable { case closed, open(Open) }
    enum Open: Equatable, Sendable, Codable { case form(Form), review }
    enum Form: Equatable, Sendable, Codable { case name(String), address(String) }
    enum Event: Equatable, Sendable, Codable { case open, type(String), next, back, submit, close, ping, expired, hurry }
    enum Output: Equatable, Sendable { case entered(String), left(String), did(String) }
    enum Node: Hashable, Sendable, CaseIterable { case closed, open, form, name, address, review }

    static var initialState: State { .closed }

    static func parent(of node: Node) -> Node? {
        switch node {
        case .closed, .open: nil
        case .form, .review: .open
        case .name, .address: .form
        }
    }

    static func leaves(of state: State) -> [Node] {
        switch state {
        case .closed: [.closed]
        case .open(.form(.name)): [.name]
        case .open(.form(.address)): [.address]
        case .open(.review): [.review]
        }
    }

    static func handle(_ event: Event, in node: Node, state: inout State) -> Effect {
        switch (node, state, event) {
        case (.closed, _, .open):
            state = .open(.form(.name("")))
            return .output(.did("open"))
        case (.name, _, .type(let text)):
            state = .open(.form(.name(text)))
            return .output(.did("type"))
        case (.name, _, .next):
            state = .open(.form(.address("")))
            return .output(.did("next"))
        case (.name, _, .hurry):
            return .output(.did("hurry"))
        case (.address, _, .back):
            state = .open(.form(.name("")))
            return .output(.did("back"))
        case (.address, _, .next):
            state = .open(.review)
            return .output(.did("next"))
        case (.review, _, .submit):
            state = .closed
            return .output(.did("submit"))
        case (.form, _, .submit):
            return .postpone
        case (.form, _, .ping):
            return .output(.did("form ping"))
        case (.form, _, .expired):
            state = .closed
            return .output(.did("form expired"))
        case (.open, _, .ping):
            return .output(.did("open ping"))
        case (.open, _, .close):
            state = .closed
            return .output(.did("close"))
        case (.closed, _, _), (.open, _, _), (.form, _, _), (.name, _, _), (.address, _, _), (.review, _, _):
            return .unhandled
        }
    }

    static func enter(_ node: Node, state: State) -> Effect {
        let entered = Effect.output(.entered(levelName(node)))
        switch node {
        case .form: return .merge([entered, .stateTimeout(after: .seconds(60), in: .form, send: .expired)])
        case .name: return .merge([entered, .stateTimeout(after: .seconds(10), send: .hurry)])
        case .closed, .open, .address, .review: return entered
        }
    }

    static func exit(_ node: Node, state: State) -> Effect { .output(.left(levelName(node))) }
}

/// A player that is `off`, or `on` with two regions at once: `playback` (`paused`, `playing`)
/// and `volume` (`loud`, `muted`). `toggle` is for playback, `mute` for volume, `reset` for
/// both, `ping` for neither (the parallel node `on` takes it).
enum Media: Statechart {
    enum State: Equatable, Sendable, Codable { case off, on(Playback, Volume) }
    enum Playback: Equatable, Sendable, Codable { case paused, playing }
    enum Volume: Equatable, Sendable, Codable { case loud, muted }
    enum Event: Equatable, Sendable, Codable { case power, toggle, mute, reset, ping }
    enum Output: Equatable, Sendable { case entered(String), left(String), did(String) }
    enum Node: Hashable, Sendable, CaseIterable { case off, on, playback, paused, playing, volume, loud, muted }

    static var initialState: State { .off }

    static func parent(of node: Node) -> Node? {
        switch node {
        case .off, .on: nil
        case .playback, .volume: .on
        case .paused, .playing: .playback
        case .loud, .muted: .volume
        }
    }

    static func leaves(of state: State) -> [Node] {
        switch state {
        case .off: [.off]
        case .on(let playback, let volume): [playback == .paused ? .paused : .playing, volume == .loud ? .loud : .muted]
        }
    }

    static func handle(_ event: Event, in node: Node, state: inout State) -> Effect {
        guard case .on(let playback, let volume) = state else {
            switch (node, event) {
            case (.off, .power):
                state = .on(.paused, .loud)
                return .output(.did("power on"))
            case (_, _): return .unhandled
            }
        }
        switch (node, event) {
        case (.paused, .toggle), (.playing, .toggle):
            state = .on(playback == .paused ? .playing : .paused, volume)
            return .output(.did("toggle"))
        case (.loud, .mute), (.muted, .mute):
            state = .on(playback, volume == .loud ? .muted : .loud)
            return .output(.did("mute"))
        case (.playback, .reset):
            state = .on(.paused, volume)
            return .output(.did("playback reset"))
        case (.volume, .reset):
            state = .on(playback, .loud)
            return .output(.did("volume reset"))
        case (.on, .ping):
            return .output(.did("on ping"))
        case (.on, .reset):
            // Never runs while a region takes `reset`: the parallel node gets only what no
            // region handles (StatechartTests.everyRegionHandles).
            return .output(.did("on reset"))
        case (.on, .power):
            state = .off
            return .output(.did("power off"))
        case (.off, _), (.on, _), (.playback, _), (.paused, _), (.playing, _), (.volume, _), (.loud, _), (.muted, _):
            return .unhandled
        }
    }

    static func enter(_ node: Node, state: State) -> Effect { .output(.entered(levelName(node))) }
    static func exit(_ node: Node, state: State) -> Effect { .output(.left(levelName(node))) }
}
