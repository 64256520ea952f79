// ElasticJob-Lite's leader election on Apache Curator 5.4 (Debian libcurator-recipes-java), for the handover
// benchmark: LeaderLatch on {job}/leader/election/latch; inside it, create the ephemeral
// {job}/leader/election/instance if absent; re-elect when that node is deleted (ElasticJob's LeaderService and
// ElectionListenerManager). Reads "quit" on stdin: deletes the node if leader (graceful shutdown) and exits.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

public class CuratorElection {
    static CuratorFramework client;
    static String job;
    static String id;

    static void electLeader() throws Exception {
        try (LeaderLatch latch = new LeaderLatch(client, job + "/leader/election/latch")) {
            latch.start();
            latch.await();
            if (client.checkExists().forPath(job + "/leader/election/instance") == null) {
                client.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(job + "/leader/election/instance", id.getBytes("UTF-8"));
            }
        }
        watchLeader();
    }

    static void watchLeader() throws Exception {
        client.checkExists().usingWatcher((Watcher) (WatchedEvent event) -> {
            if (event.getType() == Watcher.Event.EventType.NodeDeleted) {
                new Thread(() -> { try { electLeader(); } catch (Exception e) { e.printStackTrace(); } }).start();
            } else {
                try { watchLeader(); } catch (Exception e) { e.printStackTrace(); }
            }
        }).forPath(job + "/leader/election/instance");
    }

    public static void main(String[] args) throws Exception {
        client = CuratorFrameworkFactory.builder().connectString(args[0]).namespace(args[1])
                .sessionTimeoutMs(10000).connectionTimeoutMs(10000).retryPolicy(new ExponentialBackoffRetry(1000, 3, 3000)).build();
        client.start();
        client.blockUntilConnected();
        job = "/" + args[2];
        id = args[3];
        electLeader();
        System.out.println("READY " + id);
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.equals("quit")) break;
        }
        byte[] leader = client.checkExists().forPath(job + "/leader/election/instance") == null ? null : client.getData().forPath(job + "/leader/election/instance");
        if (leader != null && new String(leader, "UTF-8").equals(id)) client.delete().forPath(job + "/leader/election/instance");
        client.close();
        System.out.println("CLOSED " + id);
        System.out.flush();
    }
}
