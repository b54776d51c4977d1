import Foundation
import Grove
import GroveTestSupport
import Testing

/// Seed 004 declares `static func unsafe(_ action:) -> Transition` and a reducer would call it
/// `unsafe { … }`. Since Swift 6.2 `unsafe` before an expression is the memory-safety keyword,
/// whatever declares a function of that name (a static helper or a global function, in the Swift
/// 5 or 6 language mode): no declaration keeps that call site. These are the spellings that do.
@Suite(.timeLimit(.minutes(2)))
struct UnsafeSpellingTests {
    static func feature(_ call: String) -> String {
        """
        import Grove
        struct Feature: IOStateMachine {
            enum State: Equatable, Sendable { case idle }
            static var initialState: State { .idle }
            enum Input: Equatable, Sendable { case tap }
            enum IOEffect: Equatable, Sendable { case none }
            enum IOResult: Equatable, Sendable { case done }
            static func reduceInput(_ state: State, _ input: Input) -> Transition {
                \(call)
            }
            static func reduceIOResult(_ state: State, _ result: IOResult) -> Transition { identity }
            func runIOEffect(_ effect: IOEffect) async -> IOResult? { nil }
        }
        """
    }

    @Test("`unsafe { … }` is the keyword, whatever `unsafe` functions exist")
    func theSeedsCallIsTheKeyword() async throws {
        let helper = try await typeCheck(Self.feature(#"return unsafe { print("tapped") }"#))
        #expect(helper.status != 0, "unsafe { … } compiled")
        #expect(helper.output.contains("no unsafe operations occur within 'unsafe' expression"), "\(helper.output)")
        // A global function of that name does not change it.
        let global = try await typeCheck(Self.feature(#"return unsafe { print("tapped") }"#)
            + "\nfunc unsafe(_ action: @escaping () -> Void) -> (Int?, Int?) { action(); return (nil, nil) }")
        #expect(global.status != 0, "unsafe { … } compiled with a global unsafe(_:)")
        #expect(global.output.contains("no unsafe operations occur within 'unsafe' expression"), "\(global.output)")
    }

    @Test("`Self.unsafe { … }`, `unsafe() { … }`, `unsafe({ … })` and `` `unsafe` { … } `` call the helper")
    func theSpellingsThatCallTheHelper() async throws {
        for call in [#"return Self.unsafe { print("tapped") }"#, #"return unsafe() { print("tapped") }"#,
                     #"return unsafe({ print("tapped") })"#, #"return `unsafe` { print("tapped") }"#] {
            let result = try await typeCheck(Self.feature(call))
            #expect(result.status == 0, "\(call): \(result.output)")
        }
    }
}
