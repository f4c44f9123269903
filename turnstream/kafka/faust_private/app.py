"""A faust.App whose transport builds a consumer and a producer class of our own.

Relies on `faust.App._new_transport` (faust-streaming): Faust has no setting for the consumer or producer class; its
aiokafka `Transport.create_consumer` and `create_producer` build `self.Consumer` and `self.Producer`, which are set
here on the app's transport.
"""

from __future__ import annotations

import faust
from faust.transport.drivers import aiokafka as aiokafka_driver

from turnstream.kafka.faust_private.consumer import Consumer
from turnstream.kafka.faust_private.producer import IdempotentProducer


class ConsumerApp(faust.App):
    """faust.App whose consumer is a `consumer_class` (a faust_private.Consumer) waiting `fetch_wait_ms` at the broker."""

    consumer_class: type[Consumer] = Consumer
    fetch_wait_ms: int = 1500
    """The consumer's fetch wait (FetchWaitThread)."""
    idempotent_producer: bool = False
    """Whether the app's producer asks for idempotence (the broker must issue producer ids)."""

    def _new_transport(self) -> aiokafka_driver.Transport:
        transport = aiokafka_driver.Transport(self.conf.broker_consumer, self)
        transport.Consumer = self.consumer_class  # type: ignore[misc]  # a ClassVar to Faust: set on this app's transport only
        transport.Producer = IdempotentProducer  # type: ignore[misc]
        return transport
