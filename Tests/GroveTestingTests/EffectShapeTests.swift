import Testing
import Grove
import GroveTesting

private struct Fetch: IORequest, Hashable {
    typealias Response = Int
    var page: Int
}

private enum Shapes: Machine {
    enum Event: Equatable, Sendable { case go, done(Int) }
    typealias Output = String
    static var initialState: Int { 0 }
    static func update(_ state: inout Int, event: Event) -> Effect {
        switch event {
        case .go:
            .sequence([
                .cancel("old"),
                .merge([
                    .io(id: "fetch", Fetch(page: 2)) { .done((try? $0.get()) ?? -1) },
                    .after(.seconds(1), id: "timeout", send: .done(0)),
                ]),
                .output("started"),
            ], id: "flow")
        case .done:
            .task(id: "t") { _ in nil }
        }
    }
}

@Suite("Effect shapes", .timeLimit(.minutes(2)))
struct EffectShapeTests {
    @Test("An effect tree reads back as a comparable shape")
    func shapeOfTree() {
        var state = 0
        let effect = Shapes.update(&state, event: .go)
        #expect(effect.shape == .sequence(id: "flow", [
            .cancel("old"),
            .merge(id: nil, [.io(id: "fetch", Fetch(page: 2)), .timer(id: "timeout", delay: .seconds(1), event: .done(0))]),
            .output("started"),
        ]))
        #expect(effect.shape != .sequence(id: "flow", [.cancel("old")]))
        #expect(effect.shape.flattened.count == 4)
        #expect(effect.shape.flattened.compactMap { $0.request(as: Fetch.self) } == [Fetch(page: 2)])
    }

    @Test("Different io request values make different shapes")
    func ioRequestsCompareByValue() {
        let two: EffectShape<Shapes> = .io(id: "fetch", Fetch(page: 2))
        let three: EffectShape<Shapes> = .io(id: "fetch", Fetch(page: 3))
        #expect(two != three)
        var state = 0
        #expect(Shapes.update(&state, event: .done(1)).shape == .task(id: "t"))
    }
}
