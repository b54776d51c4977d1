import Grove
import GroveExamples
import GroveRuntime
import GroveTesting
import Testing

@Suite("UserForm", .timeLimit(.minutes(2)))
struct UserFormTests {
    private typealias FormData = UserForm.FormData
    private let valid = UserForm.FormData(name: "Ada Lovelace", email: "ada@example.com", phone: "+44 20 7946 0958")

    // MARK: Pure transitions

    @Test("each field update stores the value, clears the errors and validates the data under \"validate\"")
    func updatesValidate() {
        var state = UserForm.initialState
        #expect(UserForm.update(&state, event: .updateName("Ada")).shape.flattened
                == [.io(id: "validate", ValidateForm(form: FormData(name: "Ada")))])
        #expect(state == .editing(FormData(name: "Ada"), errors: []))

        #expect(UserForm.update(&state, event: .validationComplete([.invalidEmail, .invalidPhone])).isNone)
        #expect(state == .editing(FormData(name: "Ada"), errors: [.invalidEmail, .invalidPhone]))

        let typed = FormData(name: "Ada", email: "ada@example")
        #expect(UserForm.update(&state, event: .updateEmail("ada@example")).shape.flattened
                == [.io(id: "validate", ValidateForm(form: typed))])
        #expect(state == .editing(typed, errors: []))

        #expect(UserForm.update(&state, event: .updatePhone("1234567")).shape.flattened
                == [.io(id: "validate", ValidateForm(form: FormData(name: "Ada", email: "ada@example", phone: "1234567")))])
    }

    @Test("validate waits in validating; the verdict, or a newer update, returns to editing")
    func validateWaits() {
        var state = UserForm.State.editing(valid, errors: [.invalidEmail])
        #expect(UserForm.update(&state, event: .validate).shape.flattened == [.io(id: "validate", ValidateForm(form: valid))])
        #expect(state == .validating(valid))
        #expect(!state.isTerminal)
        #expect(UserForm.update(&state, event: .submit).isUnhandled)
        #expect(UserForm.update(&state, event: .validationComplete([])).isNone)
        #expect(state == .editing(valid, errors: []))

        state = .validating(valid)
        #expect(UserForm.update(&state, event: .updateName("Grace")).shape.flattened
                == [.io(id: "validate", ValidateForm(form: FormData(name: "Grace", email: valid.email, phone: valid.phone)))])
        #expect(state == .editing(FormData(name: "Grace", email: valid.email, phone: valid.phone), errors: []))
    }

    @Test("email rules", arguments: [
        ("ada@example.com", true), ("a.b+c@mail.example.org", true),
        ("", false), ("ada", false), ("@example.com", false), ("ada@example", false), ("ada@@example.com", false),
        ("ada@example.", false), ("ada @example.com", false),
    ])
    func emailRules(email: String, isValid: Bool) {
        let errors = FormData(name: "Ada", email: email, phone: "0123456789").validationErrors
        #expect(errors.contains(.invalidEmail) == !isValid)
    }

    @Test("phone rules", arguments: [
        ("+44 20 7946 0958", true), ("(020) 7946-0958", true), ("1234567", true),
        ("", false), ("123456", false), ("1234567890123456", false), ("020 7946 O958", false), ("44+20794609", false),
    ])
    func phoneRules(phone: String, isValid: Bool) {
        let errors = FormData(name: "Ada", email: "ada@example.com", phone: phone).validationErrors
        #expect(errors.contains(.invalidPhone) == !isValid)
    }

    @Test("submitting an invalid form reveals its errors and sends nothing")
    func submitInvalid() {
        var state = UserForm.initialState
        #expect(UserForm.update(&state, event: .submit).isNone)
        #expect(state == .editing(FormData(), errors: [.nameRequired, .invalidEmail, .invalidPhone]))
    }

    @Test("submitting a valid form cancels the validation in flight and sends it under the id \"submit\"")
    func submitValid() {
        var state = UserForm.State.editing(valid, errors: [])
        let effect = UserForm.update(&state, event: .submit)
        #expect(state == .submitting(valid))
        #expect(effect.shape.flattened == [.cancel(UserForm.validateID), .io(id: "submit", SubmitForm(form: valid))])
    }

    @Test("cancel ends the form and cancels a validation or submission in flight")
    func cancelIsTerminal() {
        for start in [UserForm.State.editing(valid, errors: []), .validating(valid), .submitting(valid)] {
            var state = start
            let effect = UserForm.update(&state, event: .cancel)
            #expect(state == .cancelled)
            #expect(state.isTerminal)
            #expect(effect.shape.flattened == [.cancel(UserForm.validateID), .cancel(UserForm.submitID)])
        }
    }

    @Test("the submission result ends the form, success or not")
    func resultIsTerminal() {
        for result in [UserForm.SubmissionResult.accepted(confirmation: "F-1"), .failed(message: "down")] {
            var state = UserForm.State.submitting(valid)
            #expect(UserForm.update(&state, event: .submissionComplete(result)).isNone)
            #expect(state == .submitted(result: result))
            #expect(state.isTerminal)
        }
        #expect(!UserForm.State.editing(valid, errors: []).isTerminal)
        #expect(!UserForm.State.submitting(valid).isTerminal)
    }

    @Test("fields cannot change while submitting, and results only count while submitting")
    func unhandledPairs() {
        var state = UserForm.State.submitting(valid)
        #expect(UserForm.update(&state, event: .updateName("Grace")).isUnhandled)
        #expect(UserForm.update(&state, event: .submit).isUnhandled)
        #expect(state == .submitting(valid))

        state = .editing(valid, errors: [])
        #expect(UserForm.update(&state, event: .submissionComplete(.accepted(confirmation: "x"))).isUnhandled)
        #expect(state == .editing(valid, errors: []))

        state = .submitting(valid)
        #expect(UserForm.update(&state, event: .validationComplete([])).isUnhandled)
        #expect(UserForm.update(&state, event: .validate).isUnhandled)
        #expect(state == .submitting(valid))
    }

    @Test("states and events survive a JSON round trip")
    func codableRoundTrip() throws {
        let states: [UserForm.State] = [.editing(valid, errors: [.invalidEmail]), .validating(valid), .submitting(valid),
                                        .submitted(result: .accepted(confirmation: "F-1")), .cancelled]
        let events: [UserForm.Event] = [.updateName("a"), .updateEmail("b"), .updatePhone("c"), .validate, .submit,
                                        .validationComplete([.nameRequired]), .submissionComplete(.failed(message: "m")), .cancel]
        #expect(try roundTrip(states) == states)
        #expect(try roundTrip(events) == events)
    }

    // MARK: Flows through the test store

    @Test("filling in the form, fixing an error and submitting it ends with the service's receipt")
    func fillAndSubmit() async {
        let store = TestStore(UserForm.self, io: ExampleHandlers.inMemory())
        await store.send(.submit) { $0 = .editing(FormData(), errors: [.nameRequired, .invalidEmail, .invalidPhone]) }
        await store.send(.updateName(valid.name)) { $0 = .editing(FormData(name: self.valid.name), errors: []) }
        await store.receive(.validationComplete([.invalidEmail, .invalidPhone])) {
            $0 = .editing(FormData(name: self.valid.name), errors: [.invalidEmail, .invalidPhone])
        }
        let typo = FormData(name: valid.name, email: "ada.example.com")
        await store.send(.updateEmail("ada.example.com")) { $0 = .editing(typo, errors: []) }
        await store.receive(.validationComplete([.invalidEmail, .invalidPhone])) {
            $0 = .editing(typo, errors: [.invalidEmail, .invalidPhone])
        }
        let fixed = FormData(name: valid.name, email: valid.email)
        await store.send(.updateEmail(valid.email)) { $0 = .editing(fixed, errors: []) }
        await store.receive(.validationComplete([.invalidPhone])) { $0 = .editing(fixed, errors: [.invalidPhone]) }
        await store.send(.updatePhone(valid.phone)) { $0 = .editing(self.valid, errors: []) }
        await store.receive(.validationComplete([]))
        await store.send(.validate) { $0 = .validating(self.valid) }
        await store.receive(.validationComplete([])) { $0 = .editing(self.valid, errors: []) }
        await store.send(.submit) { $0 = .submitting(self.valid) }
        await store.receive(.submissionComplete(.accepted(confirmation: "FORM-1"))) {
            $0 = .submitted(result: .accepted(confirmation: "FORM-1"))
        }
        #expect(await store.host.hasEnded)
        await store.finish()
    }

    @Test("a newer update replaces the validation in flight: only the latest data's verdict arrives")
    func newerValidationReplacesOlder() async throws {
        let validations = PendingCalls<ValidateForm>()
        var io = IOHandlers()
        io.register(ValidateForm.self) { try await validations.handle($0) }
        let store = TestStore(UserForm.self, io: io)
        await store.send(.updateName("A")) { $0 = .editing(FormData(name: "A"), errors: []) }
        let first = try #require(await validations.next())
        #expect(first.request.form == FormData(name: "A"))
        await store.send(.updateName("Ada")) { $0 = .editing(FormData(name: "Ada"), errors: []) }
        #expect(await first.cancellation(), "the newer update must cancel the older validation")
        let second = try #require(await validations.next())
        #expect(second.request.form == FormData(name: "Ada"))
        await first.succeed([.nameRequired])   // too late: never delivered
        await second.succeed([.invalidEmail, .invalidPhone])
        await store.receive(.validationComplete([.invalidEmail, .invalidPhone])) {
            $0 = .editing(FormData(name: "Ada"), errors: [.invalidEmail, .invalidPhone])
        }
        await store.send(.cancel) { $0 = .cancelled }
        await store.finish()
    }

    @Test("a validation service that cannot answer leaves the rules applied locally")
    func validationFallsBackToLocalRules() async throws {
        let validations = PendingCalls<ValidateForm>()
        var io = IOHandlers()
        io.register(ValidateForm.self) { try await validations.handle($0) }
        let store = TestStore(UserForm.self, io: io)
        await store.send(.validate) { $0 = .validating(FormData()) }
        let call = try #require(await validations.next())
        await call.fail(IOFailure(.workerLost, "the validation service went away"))
        await store.receive(.validationComplete([.nameRequired, .invalidEmail, .invalidPhone])) {
            $0 = .editing(FormData(), errors: [.nameRequired, .invalidEmail, .invalidPhone])
        }
        await store.send(.cancel) { $0 = .cancelled }
        await store.finish()
    }

    @Test("a failed submission ends the form with the failure")
    func failedSubmission() async throws {
        let (store, call) = try await submittedValidForm()
        #expect(call.request.form == valid)
        await call.fail(IOFailure(.workerLost, "the worker running SubmitForm went away"))
        await store.receive(.submissionComplete(.failed(message: "the worker running SubmitForm went away"))) {
            $0 = .submitted(result: .failed(message: "the worker running SubmitForm went away"))
        }
        await store.finish()
    }

    @Test("cancel while submitting cancels the submission; its late answer is never delivered")
    func cancelDuringSubmission() async throws {
        let (store, call) = try await submittedValidForm()
        await store.send(.cancel) { $0 = .cancelled }
        #expect(await call.cancellation(), "cancel must cancel the submission in flight")
        await call.succeed(SubmitForm.Receipt(confirmation: "too late"))
        #expect(await store.host.state == .cancelled)
        #expect(await store.host.hasEnded)
        #expect(throws: HostError.self) { try store.host.send(.updateName("again")) }
        await store.finish()
    }

    /// A store whose valid form was just submitted, and the submission call the test answers.
    private func submittedValidForm() async throws -> (TestStore<UserForm>, PendingCalls<SubmitForm>.Call) {
        let submissions = PendingCalls<SubmitForm>()
        var io = IOHandlers()
        io.register(SubmitForm.self) { try await submissions.handle($0) }
        let store = TestStore(UserForm.self, initialState: .editing(valid, errors: []), io: io)
        await store.send(.submit) { $0 = .submitting(self.valid) }
        return (store, try #require(await submissions.next()))
    }
}
