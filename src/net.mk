## Network handlers of the supervisor (connect, bind, listen, sendto, sendmsg).
