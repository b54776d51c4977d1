@_spi(GroveInternal) import GroveWire
import Testing

/// The epochs of correlation ids: a coordinator life never draws the one reserved for a worker's
/// direct requests (docs/DIRECT-ROUTES.md 1.7).
@Suite("CorrelationEpoch", .timeLimit(.minutes(2)))
struct CorrelationEpochTests {
    /// Always the same word: the generator that makes `random(in:using:)` return a bound.
    struct Constant: RandomNumberGenerator {
        let word: UInt64
        mutating func next() -> UInt64 { word }
    }

    @Test func theDirectEpochIsTheLargestAndKeepsBit63Free() {
        #expect(CorrelationEpoch.direct.value == CorrelationEpoch.largest)
        #expect(CorrelationEpoch.direct.id(CorrelationEpoch.counterMask) >> 63 == 0)
        #expect(CorrelationEpoch.of(CorrelationEpoch.direct.id(5)) == CorrelationEpoch.direct.value)
    }

    @Test func theEdgesOfTheRandomRangeAreNeitherZeroNorDirect() {
        var highest = Constant(word: .max)
        var lowest = Constant(word: 1)
        #expect(CorrelationEpoch.random(using: &highest).value == CorrelationEpoch.largest - 1)
        #expect(CorrelationEpoch.random(using: &lowest).value == 1)
    }

    @Test func noRandomEpochIsDirect() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100_000 {
            let epoch = CorrelationEpoch.random(using: &generator)
            #expect(epoch != CorrelationEpoch.direct && epoch.value != 0)
            if epoch == CorrelationEpoch.direct || epoch.value == 0 { break }
        }
    }
}
