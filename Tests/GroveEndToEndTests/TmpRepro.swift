import Testing

struct ReproItem: CustomStringConvertible { var topic: String; var description: String { topic } }
final class ReproBox: Sendable {
    var items: [ReproItem] { [ReproItem(topic: "effect:poller/b"), ReproItem(topic: "state:poller/b")] }
    func items(after mark: Int) -> [ReproItem] { Array(items.dropFirst(mark)) }
}
func withThing<T>(_ body: (ReproBox) async throws -> T) async throws -> T { try await body(ReproBox()) }

@Suite struct TmpRepro {
    @Test func repro() async throws {
        try await withThing { box in
            let a = box.items(after: 0).filter { $0.topic.hasSuffix(":poller/a") }
            let b = box.items(after: 0).filter { $0.topic.hasSuffix(":poller/a") }
            print("REPRO1", a.count, b.count)
            #expect(a.isEmpty, "x: \(a)")
        }
    }
    @Test func repro3() async throws {
        try await withThing { box in
            let a = box.items(after: 0).filter { $0.topic.hasSuffix(":poller/a") }
            let b = box.items(after: 0).filter { $0.topic.hasSuffix(":poller/a") }
            print("REPRO3", a.count, b.count)
            #expect(a.isEmpty)
        }
    }
}
