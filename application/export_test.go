package application

// WaitQueueReadings waits for the queue view's background readings to end.
func WaitQueueReadings(o *Operator) { o.view.behind.Wait() }
