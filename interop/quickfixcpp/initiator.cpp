// A FIX 4.4 initiator built on QuickFIX/C++ (an engine independent of the
// QuickFIX/Go the venue runs on) that logs on to `fixvenue serve`, trades and
// logs out, and checks every answer on the way.
//
// The script, in order (ClOrdIDs carry a per-run prefix so that a venue with
// a persistent journal can be used more than once):
//   1. Logon CLIENT7 -> VENUE (ResetOnLogon=Y, HeartBtInt=30).
//   2. B1: buy 10 ACME @ 99.50 DAY rests          -> ER 150=0 39=0.
//   3. S1: sell 4 ACME @ 99.00 crosses B1         -> ER 150=F for S1 (39=2) and
//      for B1 (39=1), both at the resting price 99.50 for 4.
//   4. B2: buy 5 ACME @ 98.00 rests               -> ER 150=0; then an
//      OrderCancelRequest for B2                  -> ER 150=4 39=4.
//   5. An OrderCancelRequest for an unknown order -> OrderCancelReject 35=9
//      with CxlRejResponseTo 434=1 and CxlRejReason 102=1 (unknown order).
//   6. Orders the venue refuses, one per kind of reason: off the 0.01 tick
//      (100.005), outside the price band (150.00), above the maximum
//      quantity, an unknown symbol -> ER 150=8 39=8 with OrdRejReason 99,
//      99, 13, 1 (values FIX 4.4 defines; the off-tick and band rejects once
//      sent 18 and 16, which QuickFIX/C++ refused).
//   7. OrderMassStatusRequest (AF, all orders) -> one ER 150=I for B1, the
//      only open order: 39=1, 584 echoed, 911=1, 912=Y.
//   8. TradingSessionStatusRequest (g) for ACME -> TradingSessionStatus (h)
//      340=2 (open); SecurityListRequest (x, all) -> SecurityList (y) 560=0
//      with ACME's tick size, lot and band.
//   9. An OrderCancelRequest for B1's remaining 6 -> ER 150=4 39=4 CumQty 4.
//  10. B3: buy 3 @ 97.00 rests, replaced to 4 -> ER 150=5 39=0 (OrigClOrdID
//      B3, same OrderID).
//  11. A buy stop at 100.00 (40=3) waits; a trade at 100.00 elects it -> ER
//      150=D (Restated, 378=99, StopPx echoed), then its fill at 100.50.
//  12. OrderMassCancelRequest for ACME -> ER 150=4 for the replaced B3, then
//      OrderMassCancelReport (r) 530=1 531=1 533=1.
//  13. SecurityDefinitionRequest, a type the venue does not take ->
//      BusinessMessageReject (j) 372=c 380=3 379 echoed.
//  14. MarketDataRequest for ACME's bids and offers (263=1) -> a snapshot
//      (W), then, for M1 buy 1 @ 96.00, an incremental refresh (X) with its
//      level, and a snapshot request (263=0) -> W with that level;
//      unsubscribed twice -> MarketDataRequestReject (Y) without a
//      reason for the second; a snapshot of an unknown symbol -> Y 281=0;
//      M1 cancelled.
//  15. Logout, answered by the venue's Logout.
// Every ExecutionReport must carry 37, 17, 39, 55, 54, 151, 14 and 6 and a
// fresh ExecID, and no application message may be left unread at the end.
//
// QuickFIX/C++ validates every message from the venue against its data
// dictionary (UseDataDictionary=Y in the settings file). A message that fails
// validation never reaches fromApp: the engine answers it with a session
// Reject (35=3) instead. toAdmin sees that Reject leave, so the program fails
// at once with the engine's own words rather than timing out later.
//
// Exit status: 0 when every expectation held; 1 when one did not (the reason
// is printed); 2 on a usage or configuration error; 3 when the global
// deadline passed (the watchdog ends the process even if the engine hangs).
//
// Built with -std=gnu++14: the QuickFIX/C++ 1.15 headers use dynamic
// exception specifications, which C++17 removed.

#include <quickfix/Application.h>
#include <quickfix/Log.h>
#include <quickfix/MessageStore.h>
#include <quickfix/Session.h>
#include <quickfix/SessionSettings.h>
#include <quickfix/SocketInitiator.h>
#include <quickfix/fix44/MarketDataRequest.h>
#include <quickfix/fix44/NewOrderSingle.h>
#include <quickfix/fix44/OrderCancelReplaceRequest.h>
#include <quickfix/fix44/OrderCancelRequest.h>
#include <quickfix/fix44/OrderMassCancelRequest.h>
#include <quickfix/fix44/OrderMassStatusRequest.h>
#include <quickfix/fix44/SecurityDefinitionRequest.h>
#include <quickfix/fix44/SecurityListRequest.h>
#include <quickfix/fix44/TradingSessionStatusRequest.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

// runSecondsMax bounds the whole script, logon to logout. Every wait below
// shares this one deadline.
const int runSecondsMax = 30;
// watchdogGraceSeconds is how long after the deadline the watchdog waits for
// an orderly stop before it ends the process.
const int watchdogGraceSeconds = 5;
// inboxMessagesMax bounds the queue of application messages received and not
// yet consumed by the script; the script expects about a dozen.
const size_t inboxMessagesMax = 1024;

const char *symbol = "ACME";

// ScriptFailure carries the reason a step did not go as expected.
struct ScriptFailure : std::runtime_error {
  explicit ScriptFailure(const std::string &why) : std::runtime_error(why) {}
};

std::string readable(const std::string &fix) {
  std::string s = fix;
  for (char &c : s) {
    if (c == '\x01') c = '|';
  }
  return s;
}

// PipeLog prints the engine's traffic and events with SOH shown as '|', so a
// failing run shows exactly what crossed the wire.
class PipeLog : public FIX::Log {
 public:
  explicit PipeLog(std::string prefix) : prefix_(std::move(prefix)) {}
  void clear() override {}
  void backup() override {}
  void onIncoming(const std::string &m) override { print("in ", readable(m)); }
  void onOutgoing(const std::string &m) override { print("out", readable(m)); }
  void onEvent(const std::string &e) override { print("evt", e); }

 private:
  void print(const char *kind, const std::string &text) {
    std::lock_guard<std::mutex> lock(printMu());
    std::cout << "  [qf " << prefix_ << kind << "] " << text << std::endl;
  }
  static std::mutex &printMu() {
    static std::mutex mu;
    return mu;
  }
  std::string prefix_;
};

class PipeLogFactory : public FIX::LogFactory {
 public:
  FIX::Log *create() override { return new PipeLog(""); }
  FIX::Log *create(const FIX::SessionID &id) override {
    return new PipeLog(id.getSenderCompID().getString() + "->" + id.getTargetCompID().getString() + " ");
  }
  void destroy(FIX::Log *log) override { delete log; }
};

// Interop is the QuickFIX/C++ Application: it records session events and
// queues every application message for the script running on the main thread.
class Interop : public FIX::Application {
 public:
  void onCreate(const FIX::SessionID &) override {}

  void onLogon(const FIX::SessionID &id) override {
    std::lock_guard<std::mutex> lock(mu_);
    loggedOn_ = true;
    sessionID_ = id;
    cv_.notify_all();
  }

  void onLogout(const FIX::SessionID &) override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string venueSaid =
        venueLogout_ ? " (venue Logout: \"" + venueLogoutText_ + "\")" : std::string(" (see the events above)");
    if (!loggedOn_) {
      failLocked("the connection ended before the Logon was answered" + venueSaid);
    } else if (!logoutRequested_) {
      failLocked("the session ended before the script asked to log out" + venueSaid);
    }
    if (loggedOn_) loggedOut_ = true;
    loggedOn_ = false;
    cv_.notify_all();
  }

  void toAdmin(FIX::Message &m, const FIX::SessionID &) override {
    // A Reject leaving this engine means QuickFIX/C++ refused a message from
    // the venue (data dictionary validation, sequence or header checks).
    if (msgType(m) == "3") {
      fail("QuickFIX/C++ rejected a message from the venue: Reject " + readable(m.toString()) +
           " (RefSeqNum=" + field(m, 45) + " RefTagID=" + field(m, 371) +
           " SessionRejectReason=" + field(m, 373) + " Text=\"" + field(m, 58) + "\")");
    }
  }

  void toApp(FIX::Message &, const FIX::SessionID &) throw(FIX::DoNotSend) override {}

  void fromAdmin(const FIX::Message &m, const FIX::SessionID &) throw(
      FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue,
      FIX::RejectLogon) override {
    const std::string type = msgType(m);
    if (type == "3") {
      fail("the venue rejected a message from QuickFIX/C++: " + readable(m.toString()));
    } else if (type == "5") {
      std::lock_guard<std::mutex> lock(mu_);
      venueLogout_ = true;
      venueLogoutText_ = field(m, 58);
      cv_.notify_all();
    }
  }

  void fromApp(const FIX::Message &m, const FIX::SessionID &) throw(
      FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue,
      FIX::UnsupportedMessageType) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (inbox_.size() >= inboxMessagesMax) {
      failLocked("more than " + std::to_string(inboxMessagesMax) + " unread application messages");
      return;
    }
    inbox_.push_back(m);
    cv_.notify_all();
  }

  // waitLogon blocks until the session is logged on.
  void waitLogon(Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    waitLocked(lock, deadline, "Logon", [this] { return loggedOn_; });
  }

  // requestLogout marks the end of the session as expected from now on.
  void requestLogout() {
    std::lock_guard<std::mutex> lock(mu_);
    logoutRequested_ = true;
  }

  // waitLogout blocks until the venue's Logout arrived and the session ended.
  std::string waitLogout(Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    waitLocked(lock, deadline, "the venue's Logout", [this] { return venueLogout_ && loggedOut_; });
    return venueLogoutText_;
  }

  // take removes and returns the first queued application message that
  // matches want; messages that do not match stay queued for a later step.
  FIX::Message take(Clock::time_point deadline, const std::string &what,
                    const std::function<bool(const FIX::Message &)> &want) {
    std::unique_lock<std::mutex> lock(mu_);
    FIX::Message got;
    waitLocked(lock, deadline, what, [&] { return takeLocked(want, got); });
    return got;
  }

  // takeIfQueued removes a matching message if one is already queued.
  bool takeIfQueued(const std::function<bool(const FIX::Message &)> &want, FIX::Message &out) {
    std::lock_guard<std::mutex> lock(mu_);
    return takeLocked(want, out);
  }

  std::deque<FIX::Message> unread() {
    std::lock_guard<std::mutex> lock(mu_);
    return inbox_;
  }

  FIX::SessionID sessionID() {
    std::lock_guard<std::mutex> lock(mu_);
    return sessionID_;
  }

  void fail(const std::string &why) {
    std::lock_guard<std::mutex> lock(mu_);
    failLocked(why);
  }

  static std::string field(const FIX::FieldMap &m, int tag) {
    return m.isSetField(tag) ? m.getField(tag) : std::string();
  }
  static std::string msgType(const FIX::Message &m) { return field(m.getHeader(), 35); }

 private:
  // takeLocked moves the first queued message that matches want into out
  // and reports whether there was one; mu_ must be held.
  bool takeLocked(const std::function<bool(const FIX::Message &)> &want, FIX::Message &out) {
    for (auto it = inbox_.begin(); it != inbox_.end(); ++it) {
      if (want(*it)) {
        out = *it;
        inbox_.erase(it);
        return true;
      }
    }
    return false;
  }

  void failLocked(const std::string &why) {
    if (failure_.empty()) failure_ = why;
    cv_.notify_all();
  }

  template <typename Pred>
  void waitLocked(std::unique_lock<std::mutex> &lock, Clock::time_point deadline,
                  const std::string &what, Pred done) {
    bool ok = cv_.wait_until(lock, deadline, [&] { return !failure_.empty() || done(); });
    if (!failure_.empty()) throw ScriptFailure(failure_ + " (while waiting for " + what + ")");
    if (!ok) throw ScriptFailure("timed out waiting for " + what);
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<FIX::Message> inbox_;
  FIX::SessionID sessionID_;
  bool loggedOn_ = false;
  bool loggedOut_ = false;
  bool logoutRequested_ = false;
  bool venueLogout_ = false;
  std::string venueLogoutText_;
  std::string failure_;
};

// Script drives the steps and checks each answer.
class Script {
 public:
  Script(Interop &app, std::string runID, Clock::time_point deadline)
      : app_(app), run_(std::move(runID)), deadline_(deadline) {}

  void run() {
    logon();
    restingBuy();
    cross();
    orderThenCancel();
    cancelUnknown();
    rejects();
    massStatus();
    sessionServices();
    cancelRest();
    replace();
    stopTriggered();
    massCancel();
    unsupported();
    marketData();
    expectNothingUnread("before logout");
    logout();
    expectNothingUnread("after logout");
  }

 private:
  void logon() {
    step("logon CLIENT7 -> VENUE");
    app_.waitLogon(deadline_);
    id_ = app_.sessionID();
    ok("logged on as " + id_.getSenderCompID().getString() + " to " + id_.getTargetCompID().getString());
  }

  void restingBuy() {
    step("B1: buy 10 ACME @ 99.50 (rests)");
    sendOrder(b1(), FIX::Side_BUY, 10, 99.50, "BUY7");
    FIX::Message er = expectER(b1(), "0");
    expectFields(er, b1(), {{39, "0"}, {54, "1"}, {55, symbol}});
    expectNumbers(er, b1(), {{38, 10}, {44, 99.50}, {151, 10}, {14, 0}});
    b1OrderID_ = Interop::field(er, 37);
    ok("ER New OrderID=" + b1OrderID_);
  }

  void cross() {
    step("S1: sell 4 ACME @ 99.00 (crosses B1, trades at 99.50)");
    const std::string s1 = run_ + "-S1";
    sendOrder(s1, FIX::Side_SELL, 4, 99.00, "SELL7");
    FIX::Message er = expectER(s1, "F");
    expectFields(er, s1, {{39, "2"}, {54, "2"}, {55, symbol}});
    expectNumbers(er, s1, {{31, 99.50}, {32, 4}, {14, 4}, {151, 0}, {6, 99.50}});
    er = expectER(b1(), "F");
    expectFields(er, b1(), {{39, "1"}, {54, "1"}, {37, b1OrderID_}});
    expectNumbers(er, b1(), {{31, 99.50}, {32, 4}, {14, 4}, {151, 6}, {6, 99.50}});
    // FIX allows the aggressor an ER New before its fill, or none.
    FIX::Message aggressorNew;
    const bool sawNew = app_.takeIfQueued(isER(s1, "0"), aggressorNew);
    if (sawNew) {
      checkReport(aggressorNew, s1);
      expectFields(aggressorNew, s1, {{39, "0"}});
    }
    ok(std::string("both fills at LastPx 99.50 LastQty 4: S1 filled, B1 partially filled (CumQty 4, LeavesQty 6)") +
       (sawNew ? "; S1 also had an ER New" : ""));
  }

  void orderThenCancel() {
    step("B2: buy 5 ACME @ 98.00 (rests), then cancel it");
    const std::string b2 = run_ + "-B2", c2 = run_ + "-C2";
    sendOrder(b2, FIX::Side_BUY, 5, 98.00, "BUY7");
    FIX::Message er = expectER(b2, "0");
    expectFields(er, b2, {{39, "0"}});
    expectNumbers(er, b2, {{151, 5}, {14, 0}});
    const std::string b2OrderID = Interop::field(er, 37);
    sendCancel(c2, b2, FIX::Side_BUY, 5);
    er = expectER(c2, "4");
    expectFields(er, c2, {{39, "4"}, {41, b2}, {37, b2OrderID}});
    expectNumbers(er, c2, {{151, 0}, {14, 0}});
    ok("ER Canceled for B2");
  }

  void cancelUnknown() {
    step("cancel an unknown order (expects OrderCancelReject)");
    const std::string c3 = run_ + "-C3", unknown = run_ + "-NOSUCH";
    sendCancel(c3, unknown, FIX::Side_BUY, 1);
    FIX::Message rej = app_.take(deadline_, "OrderCancelReject for " + c3, [&](const FIX::Message &m) {
      return Interop::msgType(m) == "9" && Interop::field(m, 11) == c3;
    });
    expectFields(rej, c3, {{41, unknown}, {434, "1"}, {102, "1"}});
    ok("OrderCancelReject CxlRejReason=1 Text=\"" + Interop::field(rej, 58) + "\"");
  }

  void rejects() {
    struct Case {
      const char *id, *what, *symbol;
      int qty;
      double px;
      const char *reason;
    };
    const Case cases[] = {
        {"R1", "price off the tick", symbol, 1, 100.005, "99"},
        {"R2", "price outside the band", symbol, 1, 150.00, "99"},
        {"R3", "quantity above the maximum", symbol, 2000000, 99.00, "13"},
        {"R4", "unknown symbol", "NOSUCH", 1, 99.00, "1"},
    };
    for (const Case &c : cases) {
      step(std::string("rejected order: ") + c.what);
      const std::string id = run_ + "-" + c.id;
      sendOrderOn(c.symbol, id, FIX::Side_BUY, c.qty, c.px, "REJ7");
      FIX::Message er = expectER(id, "8");
      expectFields(er, id, {{39, "8"}, {103, c.reason}});
      ok("ER Rejected OrdRejReason=" + Interop::field(er, 103) + " Text=\"" + Interop::field(er, 58) + "\"");
    }
  }

  void massStatus() {
    step("OrderMassStatusRequest for all orders (B1 is the only open one)");
    const std::string reqID = run_ + "-MS1";
    FIX44::OrderMassStatusRequest req(FIX::MassStatusReqID(reqID),
                                      FIX::MassStatusReqType(FIX::MassStatusReqType_STATUS_FOR_ALL_ORDERS));
    send(req);
    FIX::Message er = expectER(b1(), "I");
    expectFields(er, b1(), {{39, "1"}, {584, reqID}, {911, "1"}, {912, "Y"}, {37, b1OrderID_}});
    expectNumbers(er, b1(), {{151, 6}, {14, 4}});
    ok("ER OrderStatus for B1 with 584=" + reqID + " 911=1 912=Y");
  }

  void sessionServices() {
    step("TradingSessionStatusRequest for ACME, SecurityListRequest for all");
    const std::string tsID = run_ + "-TS1";
    FIX44::TradingSessionStatusRequest ts(FIX::TradSesReqID(tsID), FIX::SubscriptionRequestType('0'));
    ts.set(FIX::TradingSessionID(symbol));
    send(ts);
    FIX::Message h = app_.take(deadline_, "TradingSessionStatus for " + tsID, [&](const FIX::Message &m) {
      return Interop::msgType(m) == "h" && Interop::field(m, 335) == tsID;
    });
    expectFields(h, tsID, {{336, symbol}, {340, "2"}});
    ok("TradingSessionStatus 336=ACME 340=2 (open)");
    const std::string slID = run_ + "-SL1";
    FIX44::SecurityListRequest sl(FIX::SecurityReqID(slID), FIX::SecurityListRequestType(4));
    send(sl);
    FIX::Message y = app_.take(deadline_, "SecurityList for " + slID, [&](const FIX::Message &m) {
      return Interop::msgType(m) == "y" && Interop::field(m, 320) == slID;
    });
    expectFields(y, slID, {{560, "0"}, {146, "1"}});
    const std::string raw = readable(y.toString());
    const std::string want = "55=ACME|15=USD|232=3|233=MININCR|234=0.01|233=MINQTY|234=1|233=PRICE|234=90.00-110.00|561=1|562=1|";
    if (raw.find(want) == std::string::npos) throw ScriptFailure("SecurityList lacks " + want + ": " + raw);
    ok("SecurityList: ACME in USD, tick 0.01, lot 1, band 90.00-110.00");
  }

  void cancelRest() {
    step("cancel B1's remaining 6");
    const std::string c1 = run_ + "-C1";
    sendCancel(c1, b1(), FIX::Side_BUY, 10);
    FIX::Message er = expectER(c1, "4");
    expectFields(er, c1, {{39, "4"}, {41, b1()}, {37, b1OrderID_}});
    expectNumbers(er, c1, {{151, 0}, {14, 4}});
    ok("ER Canceled for B1 with CumQty 4");
  }

  void replace() {
    step("B3: buy 3 ACME @ 97.00 (rests), then replace it to 4 (expects ER Replaced)");
    const std::string b3 = run_ + "-B3";
    sendOrder(b3, FIX::Side_BUY, 3, 97.00, "BUY7");
    FIX::Message er = expectER(b3, "0");
    const std::string orderID = Interop::field(er, 37);
    FIX44::OrderCancelReplaceRequest g(FIX::OrigClOrdID(b3), FIX::ClOrdID(r3()), FIX::Side(FIX::Side_BUY),
                                       FIX::TransactTime(3), FIX::OrdType(FIX::OrdType_LIMIT));
    g.set(FIX::Symbol(symbol));
    g.set(FIX::OrderQty(4));
    g.set(FIX::Price(97.00));
    g.set(FIX::TimeInForce(FIX::TimeInForce_DAY));
    g.set(FIX::Account("BUY7"));
    send(g);
    er = expectER(r3(), "5");
    expectFields(er, r3(), {{39, "0"}, {41, b3}, {37, orderID}});
    expectNumbers(er, r3(), {{38, 4}, {151, 4}, {14, 0}});
    ok("ER Replaced: R3 for 4 @ 97.00, OrderID " + orderID);
  }

  void stopTriggered() {
    step("a buy stop at 100.00, elected by a trade at 100.00 (expects ER Restated 150=D, then its fill)");
    const std::string st = run_ + "-ST", s5 = run_ + "-S5", s6 = run_ + "-S6", b5 = run_ + "-B5";
    sendOrder(s6, FIX::Side_SELL, 1, 100.50, "SELL7");  // what the elected stop buys
    expectER(s6, "0");
    FIX44::NewOrderSingle stop(FIX::ClOrdID(st), FIX::Side(FIX::Side_BUY), FIX::TransactTime(3),
                               FIX::OrdType(FIX::OrdType_STOP));
    stop.set(FIX::Symbol(symbol));
    stop.set(FIX::OrderQty(1));
    stop.set(FIX::StopPx(100.00));
    stop.set(FIX::TimeInForce(FIX::TimeInForce_DAY));
    stop.set(FIX::Account("STOP7"));
    send(stop);
    expectER(st, "0");
    sendOrder(s5, FIX::Side_SELL, 1, 100.00, "SELL7");
    expectER(s5, "0");
    sendOrder(b5, FIX::Side_BUY, 1, 100.00, "BUY7");
    expectER(b5, "F");
    expectER(s5, "F");
    FIX::Message er = expectER(st, "D");
    expectFields(er, st, {{39, "0"}, {40, "3"}, {378, "99"}});
    expectNumbers(er, st, {{99, 100.00}});
    er = expectER(st, "F");
    expectFields(er, st, {{39, "2"}, {40, "3"}});
    expectNumbers(er, st, {{31, 100.50}, {32, 1}, {99, 100.00}});
    expectER(s6, "F");
    FIX::Message aggressorNew;
    app_.takeIfQueued(isER(b5, "0"), aggressorNew);
    ok("ER Restated (378=99) then Trade at 100.50 for the stop");
  }

  void massCancel() {
    step("OrderMassCancelRequest for ACME (R3 is the only open order)");
    const std::string mc = run_ + "-MC1";
    FIX44::OrderMassCancelRequest q(FIX::ClOrdID(mc), FIX::MassCancelRequestType(FIX::MassCancelRequestType_CANCEL_ORDERS_FOR_A_SECURITY),
                                    FIX::TransactTime(3));
    q.set(FIX::Symbol(symbol));
    send(q);
    FIX::Message er = expectER(r3(), "4");
    expectFields(er, r3(), {{39, "4"}});
    FIX::Message r = app_.take(deadline_, "OrderMassCancelReport for " + mc, [&](const FIX::Message &m) {
      return Interop::msgType(m) == "r" && Interop::field(m, 11) == mc;
    });
    expectFields(r, mc, {{530, "1"}, {531, "1"}, {533, "1"}, {55, symbol}});
    ok("ER Canceled for R3, OrderMassCancelReport 531=1 533=1");
  }

  void unsupported() {
    step("SecurityDefinitionRequest, a type the venue does not take (expects BusinessMessageReject 380=3)");
    const std::string sd = run_ + "-SD1";
    FIX44::SecurityDefinitionRequest c(FIX::SecurityReqID(sd), FIX::SecurityRequestType(FIX::SecurityRequestType_REQUEST_SECURITY_IDENTITY_AND_SPECIFICATIONS));
    send(c);
    FIX::Message j = app_.take(deadline_, "BusinessMessageReject for " + sd, [&](const FIX::Message &m) {
      return Interop::msgType(m) == "j" && Interop::field(m, 379) == sd;
    });
    expectFields(j, sd, {{372, "c"}, {380, "3"}});
    ok("BusinessMessageReject 372=c 380=3 Text=\"" + Interop::field(j, 58) + "\"");
  }

  void marketData() {
    step("MarketDataRequest for ACME's bids and offers (expects a W, then an X for M1's level, then a snapshot W with it)");
    const std::string md = run_ + "-MD1", m1 = run_ + "-M1";
    sendMarketDataRequest(md, '1', symbol);
    app_.take(deadline_, "MarketDataSnapshotFullRefresh for " + md, [&](const FIX::Message &m) {
      return Interop::msgType(m) == "W" && Interop::field(m, 262) == md;
    });
    sendOrder(m1, FIX::Side_BUY, 1, 96.00, "BUY7");
    expectER(m1, "0");
    FIX::Message x = app_.take(deadline_, "MarketDataIncrementalRefresh for " + md + " with 96.00", [&](const FIX::Message &m) {
      return Interop::msgType(m) == "X" && Interop::field(m, 262) == md && readable(m.toString()).find("|270=96") != std::string::npos;
    });
    ok("X: " + readable(x.toString()));
    // The X came from the feed's book, which holds M1 now: a snapshot shows it.
    const std::string snap = run_ + "-MD3";
    sendMarketDataRequest(snap, '0', symbol);
    FIX::Message w = app_.take(deadline_, "MarketDataSnapshotFullRefresh for " + snap, [&](const FIX::Message &m) {
      return Interop::msgType(m) == "W" && Interop::field(m, 262) == snap;
    });
    expectFields(w, snap, {{55, symbol}, {268, "1"}});
    ok("W: " + readable(w.toString()));
    step("unsubscribe twice (the second is refused: MarketDataRequestReject without a reason), and a snapshot of an unknown symbol");
    sendMarketDataRequest(md, '2', symbol);
    sendMarketDataRequest(md, '2', symbol);
    FIX::Message y = app_.take(deadline_, "MarketDataRequestReject for " + md, [&](const FIX::Message &m) {
      return Interop::msgType(m) == "Y" && Interop::field(m, 262) == md;
    });
    expectFields(y, md, {{281, ""}});
    // Updates built before the unsubscription arrive before the reject.
    FIX::Message late;
    while (app_.takeIfQueued([&](const FIX::Message &m) { return Interop::msgType(m) == "X" && Interop::field(m, 262) == md; }, late)) {
    }
    const std::string unknown = run_ + "-MD2";
    sendMarketDataRequest(unknown, '0', "NOSUCH");
    y = app_.take(deadline_, "MarketDataRequestReject for " + unknown, [&](const FIX::Message &m) {
      return Interop::msgType(m) == "Y" && Interop::field(m, 262) == unknown;
    });
    expectFields(y, unknown, {{281, "0"}});
    ok("MarketDataRequestReject Text=\"" + Interop::field(y, 58) + "\"; 281=0 for an unknown symbol");
    const std::string c4 = run_ + "-C4";
    sendCancel(c4, m1, FIX::Side_BUY, 1);
    expectER(c4, "4");
    ok("ER Canceled for M1");
  }

  void logout() {
    step("logout");
    FIX::Session *s = FIX::Session::lookupSession(id_);
    if (s == nullptr) throw ScriptFailure("session " + id_.toString() + " is gone before logout");
    app_.requestLogout();
    // QuickFIX/C++ sends the Logout on its next timer tick (up to 1 s later).
    s->logout("interop script done");
    const std::string text = app_.waitLogout(deadline_);
    ok("the venue answered Logout" + (text.empty() ? std::string() : " (\"" + text + "\")"));
  }

  void expectNothingUnread(const std::string &when) {
    std::deque<FIX::Message> left = app_.unread();
    if (!left.empty()) {
      throw ScriptFailure("unexpected message from the venue " + when + ": " + readable(left.front().toString()));
    }
  }

  std::string b1() const { return run_ + "-B1"; }
  std::string r3() const { return run_ + "-R3"; }

  void step(const std::string &what) {
    ++stepNo_;
    std::cout << "STEP " << stepNo_ << ": " << what << std::endl;
  }
  void ok(const std::string &what) { std::cout << "  ok: " << what << std::endl; }

  void send(FIX::Message &m) {
    if (!FIX::Session::sendToTarget(m, id_)) throw ScriptFailure("sendToTarget refused " + readable(m.toString()));
  }

  void sendOrder(const std::string &clOrdID, char side, int qty, double px, const std::string &account) {
    sendOrderOn(symbol, clOrdID, side, qty, px, account);
  }

  void sendOrderOn(const std::string &sym, const std::string &clOrdID, char side, int qty, double px,
                   const std::string &account) {
    FIX44::NewOrderSingle nos(FIX::ClOrdID(clOrdID), FIX::Side(side), FIX::TransactTime(3),
                              FIX::OrdType(FIX::OrdType_LIMIT));
    nos.set(FIX::Symbol(sym));
    nos.set(FIX::OrderQty(qty));
    nos.set(FIX::Price(px));
    nos.set(FIX::TimeInForce(FIX::TimeInForce_DAY));
    // Distinct accounts: the venue's self-trade prevention would otherwise
    // cancel B1 instead of letting S1 trade against it.
    nos.set(FIX::Account(account));
    send(nos);
  }

  void sendCancel(const std::string &clOrdID, const std::string &origClOrdID, char side, int qty) {
    FIX44::OrderCancelRequest cxl(FIX::OrigClOrdID(origClOrdID), FIX::ClOrdID(clOrdID), FIX::Side(side),
                                  FIX::TransactTime(3));
    cxl.set(FIX::Symbol(symbol));
    cxl.set(FIX::OrderQty(qty));
    send(cxl);
  }

  // sendMarketDataRequest asks for sym's bids and offers, full depth:
  // a snapshot (subscription '0'), a subscription ('1') or its end ('2').
  void sendMarketDataRequest(const std::string &reqID, char subscription, const std::string &sym) {
    FIX44::MarketDataRequest v(FIX::MDReqID(reqID), FIX::SubscriptionRequestType(subscription), FIX::MarketDepth(0));
    v.set(FIX::MDUpdateType(FIX::MDUpdateType_INCREMENTAL_REFRESH));
    FIX44::MarketDataRequest::NoMDEntryTypes types;
    for (char t : {FIX::MDEntryType_BID, FIX::MDEntryType_OFFER}) {
      types.set(FIX::MDEntryType(t));
      v.addGroup(types);
    }
    FIX44::MarketDataRequest::NoRelatedSym related;
    related.set(FIX::Symbol(sym));
    v.addGroup(related);
    send(v);
  }

  static std::function<bool(const FIX::Message &)> isER(const std::string &clOrdID, const std::string &execType) {
    return [clOrdID, execType](const FIX::Message &m) {
      return Interop::msgType(m) == "8" && Interop::field(m, 11) == clOrdID && Interop::field(m, 150) == execType;
    };
  }

  // expectER waits for an ExecutionReport for clOrdID with ExecType execType.
  FIX::Message expectER(const std::string &clOrdID, const std::string &execType) {
    FIX::Message er = app_.take(deadline_, "ExecutionReport 11=" + clOrdID + " 150=" + execType, isER(clOrdID, execType));
    checkReport(er, clOrdID);
    return er;
  }

  // checkReport checks what every ExecutionReport must carry, and that its
  // ExecID was never used before in this run.
  void checkReport(const FIX::Message &er, const std::string &clOrdID) {
    std::cout << "  got: " << readable(er.toString()) << std::endl;
    for (int tag : {37, 17, 39, 55, 54, 151, 14, 6}) {
      if (Interop::field(er, tag).empty()) {
        throw ScriptFailure("ExecutionReport for " + clOrdID + " has no tag " + std::to_string(tag));
      }
    }
    const std::string execID = Interop::field(er, 17);
    if (!execIDs_.insert(execID).second) {
      throw ScriptFailure("ExecID " + execID + " was used twice (second time for " + clOrdID + ")");
    }
  }

  static void expectFields(const FIX::Message &m, const std::string &who,
                           std::initializer_list<std::pair<int, std::string>> want) {
    for (const auto &w : want) {
      const std::string got = Interop::field(m, w.first);
      if (got != w.second) {
        throw ScriptFailure("for " + who + " tag " + std::to_string(w.first) + " is \"" + got + "\", want \"" +
                            w.second + "\" in " + readable(m.toString()));
      }
    }
  }

  // expectNumbers compares decimal fields by value: "99.5" and "99.50" are
  // the same price.
  static void expectNumbers(const FIX::Message &m, const std::string &who,
                            std::initializer_list<std::pair<int, double>> want) {
    for (const auto &w : want) {
      const std::string got = Interop::field(m, w.first);
      char *end = nullptr;
      const double v = got.empty() ? NAN : std::strtod(got.c_str(), &end);
      if (got.empty() || *end != '\0' || std::fabs(v - w.second) > 1e-9) {
        std::ostringstream o;
        o << "for " << who << " tag " << w.first << " is \"" << got << "\", want " << w.second << " in "
          << readable(m.toString());
        throw ScriptFailure(o.str());
      }
    }
  }

  Interop &app_;
  std::string run_;
  Clock::time_point deadline_;
  FIX::SessionID id_;
  std::string b1OrderID_;
  std::set<std::string> execIDs_;
  int stepNo_ = 0;
};

void usage() {
  std::cerr << "usage: fixvenue-qfcpp SETTINGS_FILE [--connect HOST:PORT] [--dictionary FIX44.xml]\n"
               "  Logs on with the single session in SETTINGS_FILE, trades on ACME, logs out.\n"
               "  --connect and --dictionary override SocketConnectHost/Port and DataDictionary.\n";
}

// loadSettings reads the settings file and applies the command-line overrides
// to every session in it.
FIX::SessionSettings loadSettings(const std::string &path, const std::string &connect, const std::string &dictionary) {
  FIX::SessionSettings file(path);
  if (file.size() != 1) throw FIX::ConfigError(path + ": want exactly one [SESSION]");
  FIX::SessionSettings out;
  out.set(file.get());
  for (const FIX::SessionID &id : file.getSessions()) {
    FIX::Dictionary d = file.get(id);
    if (!connect.empty()) {
      const size_t colon = connect.rfind(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == connect.size()) {
        throw FIX::ConfigError("--connect wants HOST:PORT, got " + connect);
      }
      d.setString(FIX::SOCKET_CONNECT_HOST, connect.substr(0, colon));
      d.setString(FIX::SOCKET_CONNECT_PORT, connect.substr(colon + 1));
    }
    if (!dictionary.empty()) d.setString(FIX::DATA_DICTIONARY, dictionary);
    out.set(id, d);
  }
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  std::string settingsPath, connect, dictionary;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--connect" || a == "--dictionary") && i + 1 < argc) {
      (a == "--connect" ? connect : dictionary) = argv[++i];
    } else if (!a.empty() && a[0] != '-' && settingsPath.empty()) {
      settingsPath = a;
    } else {
      usage();
      return 2;
    }
  }
  if (settingsPath.empty()) {
    usage();
    return 2;
  }

  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(runSecondsMax);
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::seconds(runSecondsMax + watchdogGraceSeconds));
    std::cout << "FAIL: the run did not end within " << runSecondsMax + watchdogGraceSeconds << " s" << std::endl;
    std::_Exit(3);
  }).detach();

  std::unique_ptr<FIX::SessionSettings> settings;
  try {
    settings.reset(new FIX::SessionSettings(loadSettings(settingsPath, connect, dictionary)));
  } catch (const FIX::ConfigError &e) {
    std::cerr << "fixvenue-qfcpp: " << e.what() << std::endl;
    return 2;
  }

  Interop app;
  FIX::MemoryStoreFactory store;
  PipeLogFactory log;
  std::unique_ptr<FIX::SocketInitiator> initiator;
  int status = 0;
  try {
    initiator.reset(new FIX::SocketInitiator(app, store, *settings, log));
    initiator->start();
    // The run prefix keeps ClOrdIDs unique across runs against one venue.
    const std::string runID =
        "QF" + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count());
    Script(app, runID, deadline).run();
    std::cout << "PASS: QuickFIX/C++ logged on, traded, replaced, cancelled, took market data and logged out against the venue"
              << std::endl;
  } catch (const ScriptFailure &e) {
    std::cout << "FAIL: " << e.what() << std::endl;
    status = 1;
  } catch (const FIX::ConfigError &e) {
    std::cerr << "fixvenue-qfcpp: " << e.what() << std::endl;
    status = 2;
  } catch (const std::exception &e) {
    std::cout << "FAIL: " << e.what() << std::endl;
    status = 1;
  }
  if (initiator) initiator->stop(status != 0);
  return status;
}
