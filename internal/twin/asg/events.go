package asg

// Event is one line of the group's activity history (EC2 console → Auto
// Scaling group → Activity, where the workshop tells you to watch a refresh:
// workshop 6.4), an instance refresh event (EventBridge "EC2 Auto Scaling
// Instance Refresh ..." detail types), or a Node Termination Handler log
// line.
type Event struct {
	Type     string // Normal or Warning
	Code     string // stable machine name, one of the Event* constants
	Source   string // SourceAutoScaling or SourceNTH
	Group    string
	Instance string // i-0123456789abcdef0
	Node     string
	Message  string
}

// Event sources.
const (
	SourceAutoScaling = "autoscaling"
	SourceNTH         = "aws-node-termination-handler"
)

// Event codes.
const (
	EventLaunching          = "InstanceLaunching"         // "Launching a new EC2 instance: i-…"
	EventInService          = "InstanceInService"         // EC2 reports it running; warm-up starts
	EventWarmedUp           = "InstanceWarmedUp"          // warm-up over; Warning if its node is not Ready yet
	EventTerminating        = "InstanceTerminating"       // "Terminating EC2 instance: i-…"
	EventLifecycleWait      = "LifecycleHookWait"         // Terminating:Wait
	EventLifecycleCompleted = "LifecycleActionCompleted"  // CompleteLifecycleAction
	EventLifecycleTimeout   = "LifecycleHookTimeout"      // HeartbeatTimeout expired: DefaultResult
	EventTerminated         = "InstanceTerminated"        // EC2 reports it terminated
	EventLaunchFailed       = "InstanceLaunchFailed"      // EC2 refused the launch
	EventRefreshStarted     = "InstanceRefreshStarted"    // EventBridge: ... Instance Refresh Started
	EventRefreshCheckpoint  = "InstanceRefreshCheckpoint" // ... Checkpoint Reached
	EventRefreshBaking      = "InstanceRefreshBaking"     // BakeTime started
	EventRefreshSucceeded   = "InstanceRefreshSucceeded"  // ... Succeeded
	EventRefreshFailed      = "InstanceRefreshFailed"     // ... Failed
	EventNTHTainted         = "NodeTainted"               // NTH --taint-node
	EventNTHDrained         = "NodeCordonedAndDrained"    // NTH CordonAndDrain
	EventNTHDrainFailed     = "NodeCordonAndDrainError"   // NTH CordonAndDrainError
)

func (g *group) log(e Event) {
	if e.Type == "" {
		e.Type = "Normal"
	}
	if e.Source == "" {
		e.Source = SourceAutoScaling
	}
	e.Group = g.spec.Name
	g.a.emit(e)
}

func (g *group) logInstance(code, typ string, in *instance, msg string) {
	g.log(Event{Type: typ, Code: code, Instance: in.id, Node: in.node, Message: msg})
}
